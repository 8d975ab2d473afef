"""SIGTERM: iap-fcgi stops accepting, answers what it holds, exits; a restart serves again."""
import os
import signal
import threading
import time

import pytest

from invariants import Ledger
from support import PAY_6, assert_error, new_transaction_id, new_user_id, wait_until

APPLE_LATENCY_MS = 1500
SIGNAL_AFTER_SECONDS = 0.3
GRACE_SECONDS = 35   # the service's 30 s, and some


def running(pid):
    """The process exists and is not a zombie (iap-fcgi's parent, a setsid shell, is gone: init reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.outage("iap-fcgi")
def test_sigterm_finishes_the_requests_under_way(api, db, receipts, simulator, stack, iap_fcgi_pid, run_dir):
    ledger = Ledger("SIGTERM while a verify waits on Apple")
    simulator.control(latency_ms=APPLE_LATENCY_MS)
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt, user_id = receipts.app_receipt([bought]), new_user_id()
    log_path = run_dir / "logs" / "iap-fcgi.log"
    log_offset = log_path.stat().st_size
    pid = iap_fcgi_pid()
    answers = []
    request = threading.Thread(target=lambda: answers.append(ledger.post(api, receipt, user_id=user_id)))

    request.start()
    time.sleep(SIGNAL_AFTER_SECONDS)   # the request is waiting on Apple
    os.kill(pid, signal.SIGTERM)
    try:
        time.sleep(0.3)
        # Not accepted any more: nginx finds no one on the socket and answers its JSON 503.
        assert_error(api.get("/v1/health"), 503, "service_unavailable")
        request.join(timeout=GRACE_SECONDS)
        assert answers and answers[0] is not None, "the request under way got no answer"
        assert answers[0].status_code == 200 and answers[0].json()["status"] == "delivered", answers[0].text[:300]
        wait_until(lambda: not running(pid), GRACE_SECONDS, "iap-fcgi to exit after SIGTERM")
        with open(log_path, "rb") as log:
            log.seek(log_offset)
            lines = log.read().decode(errors="replace")
        # The log's last word is the exit's: "stopped" is written just before exit(0).
        assert "iap-fcgi: signal 15: no new requests; finishing 1 under way" in lines, lines[-2000:]
        assert "iap-fcgi: stopped\n" in lines.split("signal 15")[-1], lines[-2000:]
    finally:
        if running(pid):
            os.kill(pid, signal.SIGKILL)
        stack("start iap-fcgi")
    assert iap_fcgi_pid() != pid
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "health after the restart")

    simulator.reset()
    another = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    again = ledger.post(api, receipts.app_receipt([another]), user_id=user_id)
    assert again is not None and again.status_code == 200 and again.json()["status"] == "delivered", again
    ledger.check(db, [bought["transaction_id"], another["transaction_id"]])
