"""`iapctl retry-pending`: receipts whose Apple call never completed are verified
again and delivered, safely beside the running service."""
from invariants import Ledger
from support import PAY_6, new_transaction_id, new_user_id


def unverified_receipt(api, receipts, simulator, user_id):
    """A verify request answered retry_later (Apple failing): its receipt row stays unverified."""
    bought = [receipts.purchase(PAY_6, transaction_id=new_transaction_id())]
    receipt = receipts.app_receipt(bought)
    simulator.control(force_status=21005)
    response = api.verify(receipt, user_id=user_id)
    assert response.status_code == 503 and response.json()["status"] == "retry_later", response.text[:300]
    simulator.reset()
    return receipt, bought[0]["transaction_id"]


def test_retry_pending_delivers_what_apple_never_answered(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    receipt, tid = unverified_receipt(api, receipts, simulator, user_id)
    assert db.delivered_count([tid]) == 0

    output = iapctl("retry-pending", "--minimum-age", "0")

    assert "delivered=" in output, output
    assert db.transaction(tid)["state"] == "delivered"
    assert db.transaction(tid)["user_id"] == user_id
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE user_id = %s AND verified_at IS NULL", user_id) == 0
    # The app comes back after all: told already_delivered, nothing twice.
    again = api.verify(receipt, user_id=user_id)
    assert again.json()["status"] == "already_delivered", again.text[:300]
    ledger = Ledger("retry-pending after an Apple outage")
    ledger.record(receipt, again)
    ledger.check(db, [tid])


def test_a_second_run_finds_nothing_left(api, receipts, simulator, iapctl):
    unverified_receipt(api, receipts, simulator, new_user_id())
    iapctl("retry-pending", "--minimum-age", "0")
    assert "retried 0 receipt(s)" in iapctl("retry-pending", "--minimum-age", "0")


def test_receipts_younger_than_the_minimum_age_are_left_alone(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    iapctl("retry-pending", "--minimum-age", "3600")
    assert db.delivered_count([tid]) == 0
    iapctl("retry-pending", "--minimum-age", "0")
    assert db.delivered_count([tid]) == 1


def test_two_runs_never_overlap(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    # This connection plays the other run: it holds the run's lock.
    assert db.scalar("SELECT GET_LOCK('iap_retry_pending', 0)") == 1
    try:
        assert "another retry-pending run is under way" in iapctl("retry-pending", "--minimum-age", "0")
        assert db.delivered_count([tid]) == 0
    finally:
        db.scalar("SELECT RELEASE_LOCK('iap_retry_pending')")
    iapctl("retry-pending", "--minimum-age", "0")
    assert db.delivered_count([tid]) == 1
