"""`iapctl retry-pending`: receipts whose Apple call never completed are verified
again and delivered, safely beside the running service."""
import threading

from invariants import Ledger
from support import PAY_6, new_transaction_id, new_user_id

APPLE_CALLS_PER_ENVIRONMENT = 3   # the service's retry policy: production answers 21005 to all three


def unverified_receipt(api, receipts, simulator, user_id, ledger=None):
    """A verify request answered retry_later by a 21005 outage that ends with it: its receipt row stays
    unverified. Returns (receipt_data, transaction id)."""
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt = receipts.app_receipt([bought])
    simulator.control(force_status=21005, fail_next=APPLE_CALLS_PER_ENVIRONMENT)
    response = (ledger or Ledger("a 21005 outage")).post(api, receipt, user_id=user_id)
    assert response.status_code == 503 and response.json()["status"] == "retry_later", response.text[:300]
    assert simulator.control()["fail_next"] == 0, "the outage outlived the request's calls"
    return receipt, bought["transaction_id"]


def unverified_receipts(db, user_id):
    return db.scalar("SELECT COUNT(*) FROM receipts WHERE user_id = %s AND verified_at IS NULL", user_id)


def test_retry_pending_delivers_what_apple_never_answered(api, db, receipts, simulator, iapctl):
    ledger, user_id = Ledger("retry-pending after a 21005 outage"), new_user_id()
    receipt, tid = unverified_receipt(api, receipts, simulator, user_id, ledger)
    assert db.transaction(tid) is None and unverified_receipts(db, user_id) == 1

    output = iapctl("retry-pending", "--minimum-age", "0")

    assert "delivered=" in output, output
    row = db.transaction(tid)
    assert row["state"] == "delivered" and row["user_id"] == user_id, row
    assert unverified_receipts(db, user_id) == 0
    # The app comes back after all: told already_delivered, nothing twice.
    again = ledger.post(api, receipt, user_id=user_id)
    assert again.json()["status"] == "already_delivered", again.text[:300]
    ledger.check(db, [tid])


def test_a_second_run_finds_nothing_left(api, receipts, simulator, iapctl):
    unverified_receipt(api, receipts, simulator, new_user_id())
    assert "retried 0 receipt(s)" not in iapctl("retry-pending", "--minimum-age", "0")
    assert iapctl("retry-pending", "--minimum-age", "0").strip() == "retried 0 receipt(s)"


def test_receipts_younger_than_the_minimum_age_are_left_alone(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    iapctl("retry-pending", "--minimum-age", "3600")
    assert db.transaction(tid) is None and unverified_receipts(db, user_id) == 1
    iapctl("retry-pending", "--minimum-age", "0")
    assert db.delivered_count([tid]) == 1


def test_two_runs_never_overlap(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    # This connection plays the other run: it holds the run's lock.
    assert db.scalar("SELECT GET_LOCK('iap_retry_pending', 0)") == 1
    try:
        assert "another retry-pending run is under way" in iapctl("retry-pending", "--minimum-age", "0")
        assert db.transaction(tid) is None and unverified_receipts(db, user_id) == 1
    finally:
        db.scalar("SELECT RELEASE_LOCK('iap_retry_pending')")
    iapctl("retry-pending", "--minimum-age", "0")
    assert db.delivered_count([tid]) == 1


def test_a_run_and_the_app_coming_back_at_once_deliver_once(api, db, receipts, simulator, iapctl):
    """Safe from cron while the service runs: the run and the app's own retry race for the same receipt."""
    ledger, user_id = Ledger("retry-pending racing the app's retry"), new_user_id()
    receipt, tid = unverified_receipt(api, receipts, simulator, user_id, ledger)
    simulator.control(latency_ms=300)   # both are waiting on Apple at the same time
    outputs = []
    run = threading.Thread(target=lambda: outputs.append(iapctl("retry-pending", "--minimum-age", "0")))

    run.start()
    answer = ledger.post(api, receipt, user_id=user_id)
    run.join(timeout=60)

    assert outputs and outputs[0].startswith("retried "), outputs
    assert answer.status_code == 200 and answer.json()["status"] in ("delivered", "already_delivered"), answer.text
    assert unverified_receipts(db, user_id) == 0
    ledger.check(db, [tid])
