"""SIGTERM: iap-fcgi stops accepting, answers what it holds, exits; a restart serves again."""
import os
import signal
import threading

import pymysql
import pytest

from invariants import Ledger
from support import PAY_6, assert_error, lock_waiting_queries, new_transaction_id, new_user_id, wait_until

GRACE_SECONDS = 35   # the service's 30 s, and some


def new_log(path, offset):
    """What iap-fcgi wrote to its log after `offset`."""
    with open(path, "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


def running(pid):
    """The process exists and is not a zombie (iap-fcgi's parent, a setsid shell, is gone: init reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def hold_the_row_of(db, transaction_id):
    """A transaction of the test's own that keeps `transaction_id` from being inserted into `transactions`
    until it ends (REPEATABLE READ: a locking read of a missing key locks the gap it would go in)."""
    holder = pymysql.connect(**dict(db.connect_args, autocommit=False))
    with holder.cursor() as cursor:
        cursor.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        cursor.execute("SELECT transaction_id FROM transactions WHERE transaction_id = %s FOR UPDATE",
                       (transaction_id,))
        assert cursor.fetchall() == ()
    return holder


@pytest.mark.outage("iap-fcgi")
def test_sigterm_finishes_the_requests_under_way(api, db, receipts, stack, iap_fcgi_pid, run_dir):
    """The request under way is held at a known point: Apple has answered and its delivery waits for a row
    lock the test holds, however long the stop takes. Only once iap-fcgi has said it stops, and nginx
    answers 503 for it, is the lock let go: the request is then answered and the process exits."""
    ledger = Ledger("SIGTERM while a verify is under way")
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt, user_id = receipts.app_receipt([bought]), new_user_id()
    log_path = run_dir / "logs" / "iap-fcgi.log"
    log_offset = log_path.stat().st_size
    pid = iap_fcgi_pid()
    answers = []
    request = threading.Thread(target=lambda: answers.append(ledger.post(api, receipt, user_id=user_id)))

    holder = hold_the_row_of(db, bought["transaction_id"])
    try:
        request.start()
        wait_until(lambda: lock_waiting_queries("INSERT INTO transactions"), 30, "the delivery waiting for the row")
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: "iap-fcgi: signal 15: no new requests; finishing 1 under way" in new_log(log_path, log_offset),
                   30, "iap-fcgi taking the signal")
        # Not accepted any more: nginx finds no one on the socket and answers its JSON 503. The request under
        # way still waits for the lock, so this is not the answer of a process that has exited.
        wait_until(lambda: api.get("/v1/health").status_code == 503, 30, "nginx answering 503 for the stopping service")
        assert_error(api.get("/v1/health"), 503, "service_unavailable")
        assert running(pid) and request.is_alive() and not answers, "the request under way was not held"
        holder.rollback()
        request.join(timeout=GRACE_SECONDS)
        assert answers and answers[0] is not None, "the request under way got no answer"
        assert answers[0].status_code == 200 and answers[0].json()["status"] == "delivered", answers[0].text[:300]
        wait_until(lambda: not running(pid), GRACE_SECONDS, "iap-fcgi to exit after SIGTERM")
        lines = new_log(log_path, log_offset)
        # The log's last word is the exit's: "stopped" is written just before exit(0).
        assert "iap-fcgi: stopped\n" in lines.split("signal 15")[-1], lines[-2000:]
    finally:
        holder.close()
        if running(pid):
            os.kill(pid, signal.SIGKILL)
        stack("start iap-fcgi")
    assert iap_fcgi_pid() != pid
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "health after the restart")

    another = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    again = ledger.post(api, receipts.app_receipt([another]), user_id=user_id)
    assert again is not None and again.status_code == 200 and again.json()["status"] == "delivered", again
    ledger.check(db, [bought["transaction_id"], another["transaction_id"]])
