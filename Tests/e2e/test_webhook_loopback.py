"""A webhook on this machine over plain HTTP (docs/events.md "Push: the webhook"): IAP_WEBHOOK_URL may be
`http://` when its host is loopback (the game's PHP on the same machine); any other host still needs
`https://`. One iap-fcgi of the test's own (its own FastCGI socket, the stack's database) pushes to a
plain-HTTP receiver on 127.0.0.1; deliveries go through nginx and the stack's iap-fcgi as in
test_webhook.py.
"""
import pytest

from fastcgi_client import start_up_refusal
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until, webhook_service
from webhook_receiver import WebhookReceiver

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
    with PlainHTTPReceiver(SECRET, run_dir / "certs") as receiver:
        yield receiver


@pytest.fixture(scope="module")
def dispatcher(receiver, db, tmp_path_factory):
    """An iap-fcgi whose IAP_WEBHOOK_URL is the plain-HTTP receiver."""
    with webhook_service(db, tmp_path_factory.mktemp("webhook-loopback"), receiver.url, SECRET, "loopback") as log:
        yield log


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
