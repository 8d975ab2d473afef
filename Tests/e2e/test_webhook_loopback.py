"""A webhook on this machine over plain HTTP (API.md "Events for the game", Push): IAP_WEBHOOK_URL may be
`http://` when its host is loopback (the game's PHP on the same machine); any other host still needs
`https://`. One iap-fcgi of the test's own (its own FastCGI socket, the stack's database) pushes to a
plain-HTTP receiver on 127.0.0.1; deliveries go through nginx and the stack's iap-fcgi as in
test_webhook.py.
"""
import subprocess

import pytest

from fastcgi_client import IAP_FCGI, service_environment, start_up_refusal, stop_service, wait_until_answering
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until
from webhook_receiver import NEW_HEADS_PENDING, WebhookReceiver

SECRET = "whsec-e2e-loopback-0123456789"


class PlainHTTPReceiver(WebhookReceiver):
    """The tests' webhook receiver, served without TLS."""

    def __init__(self, secret, certs_dir):
        super().__init__(secret, certs_dir, host="127.0.0.1")
        self.context = None     # asyncio.start_server(ssl=None): plain HTTP

    @property
    def url(self):
        return f"http://{self.host}:{self.port}/iap/events"


@pytest.fixture(scope="module")
def receiver(run_dir):
    receiver = PlainHTTPReceiver(SECRET, run_dir / "certs").start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="module")
def dispatcher(receiver, db, tmp_path_factory):
    """An iap-fcgi whose IAP_WEBHOOK_URL is the plain-HTTP receiver. Events earlier tests left pending
    were pulled (the stack runs without a webhook): marked sent first, as test_webhook.py does."""
    db.execute("UPDATE events SET status = 'sent', sent_at = UTC_TIMESTAMP(3) WHERE status = 'pending'")
    directory = tmp_path_factory.mktemp("webhook-loopback")
    socket, log = str(directory / "loopback.sock"), directory / "loopback.log"
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [str(IAP_FCGI)], stdin=subprocess.DEVNULL, stdout=output, stderr=output,
            env=service_environment(IAP_LISTEN=socket, IAP_WEBHOOK_URL=receiver.url, IAP_WEBHOOK_SECRET=SECRET))
    try:
        wait_until_answering(socket, process, log)
        wait_until(lambda: db.scalar(NEW_HEADS_PENDING) == 0, 180, "the events earlier tests left sent")
        yield process
    finally:
        assert stop_service(process) == 0, log.read_text(errors="replace")[-3000:]
    assert SECRET not in log.read_text(errors="replace")


def test_an_event_is_pushed_over_plain_http_to_a_loopback_receiver(api, db, receipts, receiver, dispatcher):
    user_id = new_user_id()
    purchase = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    assert_verify_answer(api.verify(receipts.app_receipt([purchase]), user_id=user_id), "delivered")
    [row] = db.query("SELECT * FROM events WHERE user_id = %s", user_id)
    wait_until(lambda: db.scalar("SELECT status FROM events WHERE event_id = %s", row["event_id"]) == "sent", 30,
               f"event {row['event_id']} sent over http://127.0.0.1")

    [delivery] = receiver.of([row["event_id"]])
    assert delivery.acknowledged and delivery.signature_ok, delivery.headers
    assert delivery.body["event_id"] == row["event_id"] and delivery.body["type"] == "delivered"
    assert delivery.body["transaction"]["transaction_id"] == purchase["transaction_id"]
    assert receiver.bad_requests == []


@pytest.mark.parametrize("url", ["http://game.example.com/iap/events", "http://127.0.0.1.example.com/iap/events",
                                 "http://localhost.example.com/iap/events", "http://user@127.0.0.1@example.com/"])
def test_plain_http_to_any_other_host_stops_the_start(tmp_path, url):
    status, log = start_up_refusal(tmp_path / "refused.log", IAP_LISTEN=str(tmp_path / "refused.sock"),
                                   IAP_WEBHOOK_URL=url, IAP_WEBHOOK_SECRET=SECRET)
    assert status != 0, log
    assert "IAP_WEBHOOK_URL" in log and "loopback" in log, log
    assert SECRET not in log
