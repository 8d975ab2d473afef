"""`iapctl retry-pending`: receipts whose Apple call never completed are verified
again and delivered, safely beside the running service."""
import threading

import pytest

from invariants import Ledger
from support import PAY_6, new_transaction_id, new_user_id, open_receipts, placeholders
from test_operations_metrics import scrape, value

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


def test_retry_pending_delivers_what_apple_never_answered(api, db, receipts, simulator, iapctl):
    ledger, user_id = Ledger("retry-pending after a 21005 outage"), new_user_id()
    receipt, tid = unverified_receipt(api, receipts, simulator, user_id, ledger)
    assert db.transaction(tid) is None and open_receipts(db, user_id) == 1

    output = iapctl("retry-pending", "--minimum-age", "0")

    assert "delivered=" in output, output
    row = db.transaction(tid)
    assert row["state"] == "delivered" and row["user_id"] == user_id, row
    assert open_receipts(db, user_id) == 0
    # The app comes back after all: told already_delivered, nothing twice.
    again = ledger.post(api, receipt, user_id=user_id)
    assert again.json()["status"] == "already_delivered", again.text[:300]
    ledger.check(db, [tid])


@pytest.mark.outage("iap-fcgi")
def test_the_backlog_gauge_counts_only_what_retry_pending_takes(api, db, receipts, simulator, iapctl, stack):
    """iap_retry_pending_receipts counts the rows retry-pending still has to finish. A jws row left open
    by a transaction_id fetch that a crash cut short (test_transaction_id_verify.py makes one) is not
    one: no run ever takes it, and counting it kept the gauge above 0 for good."""
    user_id = new_user_id()
    # That crash's leftover, made here without the crash: received, never verified, kind jws.
    jws_row = db.execute(
        "INSERT INTO receipts (kind, sha256, receipt_data, user_id, transaction_id, received_at)"
        " VALUES ('jws', SHA2('', 256), '', %s, %s, UTC_TIMESTAMP(3) - INTERVAL 1 HOUR)",
        user_id, new_transaction_id())
    assert jws_row == 1
    try:
        unverified_receipt(api, receipts, simulator, user_id)
        assert "delivered=" in iapctl("retry-pending", "--minimum-age", "0")
        assert open_receipts(db, user_id) == 1, "retry-pending takes receipts only: the jws row stays open"
        unverified_receipt(api, receipts, simulator, user_id)   # one receipt for the next run to take
        open_rows = "SELECT COUNT(*) FROM receipts WHERE verified_at IS NULL AND retry_final_state IS NULL"
        to_take = db.scalar(open_rows + " AND kind = 'receipt'")
        assert to_take >= 1 and db.scalar(open_rows) > to_take

        # The metrics thread counts the backlog first thing when it starts, before its first scrape:
        # a restart makes the gauge read the rows as they are now, whenever its 15 s period falls.
        stack("stop iap-fcgi")
        stack("start iap-fcgi")

        assert value(scrape(), "iap_retry_pending_receipts") == to_take, (
            "the gauge counts rows retry-pending never takes")
    finally:
        db.execute("DELETE FROM receipts WHERE kind = 'jws' AND user_id = %s AND verified_at IS NULL", user_id)


def test_a_second_run_finds_nothing_left(api, receipts, simulator, iapctl):
    unverified_receipt(api, receipts, simulator, new_user_id())
    assert "retried 0 receipt(s)" not in iapctl("retry-pending", "--minimum-age", "0")
    assert iapctl("retry-pending", "--minimum-age", "0").strip() == "retried 0 receipt(s)"


def test_receipts_younger_than_the_minimum_age_are_left_alone(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    iapctl("retry-pending", "--minimum-age", "3600")
    assert db.transaction(tid) is None and open_receipts(db, user_id) == 1
    iapctl("retry-pending", "--minimum-age", "0")
    assert db.delivered_count([tid]) == 1


def test_two_runs_never_overlap(api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    # This connection plays the other run: it holds the run's lock, a row of cluster_locks (GET_LOCK
    # would hold on one Galera node only), with a lease that has not run out.
    db.execute("INSERT INTO cluster_locks (name, holder, acquired_at, expires_at)"
               " VALUES ('retry_pending', 'the test', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 MINUTE)")
    try:
        assert "another retry-pending run is under way" in iapctl("retry-pending", "--minimum-age", "0")
        assert db.transaction(tid) is None and open_receipts(db, user_id) == 1
        # A run that died leaves its row: once the lease has run out, the next run takes over.
        db.execute("UPDATE cluster_locks SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND"
                   " WHERE name = 'retry_pending'")
        assert iapctl("retry-pending", "--minimum-age", "0").startswith("retried ")
    finally:
        db.execute("DELETE FROM cluster_locks WHERE holder = 'the test'")
    assert db.delivered_count([tid]) == 1
    assert db.scalar("SELECT COUNT(*) FROM cluster_locks") == 0, "the run released its lock"


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
    assert open_receipts(db, user_id) == 0
    ledger.check(db, [tid])


# --- runs that cannot stall (attempts, backoff, a final state, bytes already verified) --------

def flush_backlog(iapctl):
    """One run over every receipt another test left unverified, so that a test sees only its own rows
    (rows that do not settle then wait out their backoff)."""
    iapctl("retry-pending", "--minimum-age", "0", "--limit", "100000")


def never_settling_receipt(api, receipts, simulator, user_id, status=21000):
    """A Sandbox receipt while the sandbox answers `status` for good (21000, not readable: asking again
    will not help; 21005, unavailable): answered retry_later, its row stays unverified. Production
    receipts are not affected. Returns (receipt_data, transaction id)."""
    simulator.control(force_status=status, fault_env="sandbox")
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt = receipts.app_receipt([bought], environment="Sandbox")
    response = api.verify(receipt, user_id=user_id)
    assert response.status_code == 503 and response.json()["apple_status"] == status, response.text[:300]
    return receipt, bought["transaction_id"]


def retry_columns(db, receipt_ids):
    rows = db.query(f"SELECT receipt_id, verified_at, retry_attempts, retry_final_state, retry_final_reason, "
                    f"superseded_by FROM receipts WHERE receipt_id IN ({placeholders(receipt_ids)})", *receipt_ids)
    return {row["receipt_id"]: row for row in rows}


def receipt_ids_of(db, user_id):
    return [row["receipt_id"] for row in
            db.query("SELECT receipt_id FROM receipts WHERE user_id = %s ORDER BY receipt_id", user_id)]


@pytest.mark.parametrize("status", [21000, 21005], ids=["given up at once (21000)", "backing off (21005)"])
def test_receipts_that_never_settle_do_not_block_newer_ones(api, db, receipts, simulator, iapctl, status):
    """More never-settling rows than --limit, then a receipt Apple would settle: runs reach it."""
    limit, user_id = 3, new_user_id()
    flush_backlog(iapctl)
    for _ in range(limit + 2):
        never_settling_receipt(api, receipts, simulator, user_id, status)
    simulator.reset()
    _, tid = unverified_receipt(api, receipts, simulator, user_id)
    simulator.control(force_status=status, fault_env="sandbox")   # the stuck rows stay stuck

    outputs = [iapctl("retry-pending", "--minimum-age", "0", "--limit", str(limit)) for _ in range(2)]

    row = db.transaction(tid)
    assert row is not None and row["state"] == "delivered", f"the newer receipt was never reached: {outputs}"


def test_rows_whose_bytes_were_verified_since_are_closed_without_apple(api, db, receipts, simulator, iapctl):
    """Client retries during an outage leave several rows for the same bytes; once one completed, the
    others are closed, pointing at it, and Apple is not asked again."""
    ledger, user_id = Ledger("retry-pending and rows already verified"), new_user_id()
    flush_backlog(iapctl)
    receipt, tid = unverified_receipt(api, receipts, simulator, user_id, ledger)
    simulator.control(force_status=21005, fail_next=APPLE_CALLS_PER_ENVIRONMENT)   # the app retries: still down
    assert ledger.post(api, receipt, user_id=user_id).status_code == 503
    assert ledger.post(api, receipt, user_id=user_id).json()["status"] == "delivered"   # Apple is back
    first, second, completed = receipt_ids_of(db, user_id)
    simulator.reset_stats()

    output = iapctl("retry-pending", "--minimum-age", "0")

    calls = simulator.requests_to("production") + simulator.requests_to("sandbox")
    assert calls == 0, f"Apple asked {calls} time(s) about bytes already verified: {output}"
    rows = retry_columns(db, [first, second])
    for receipt_id in (first, second):
        assert rows[receipt_id]["retry_final_state"] == "superseded", rows[receipt_id]
        assert rows[receipt_id]["superseded_by"] == completed, rows[receipt_id]
    assert f"{first} (by {completed})" in output and f"{second} (by {completed})" in output, output
    ledger.check(db, [tid])


def test_rows_with_the_same_bytes_go_to_apple_once(api, db, receipts, simulator, iapctl):
    """Three rows for the same bytes, none completed: one call sequence settles them all."""
    ledger, user_id = Ledger("retry-pending and rows with the same bytes"), new_user_id()
    flush_backlog(iapctl)
    receipt, tid = unverified_receipt(api, receipts, simulator, user_id, ledger)
    for _ in range(2):
        simulator.control(force_status=21005, fail_next=APPLE_CALLS_PER_ENVIRONMENT)
        assert ledger.post(api, receipt, user_id=user_id).status_code == 503
    first, second, third = receipt_ids_of(db, user_id)
    simulator.reset_stats()

    output = iapctl("retry-pending", "--minimum-age", "0")

    assert simulator.requests_to("production") == 1, output
    assert db.transaction(tid)["state"] == "delivered"
    rows = retry_columns(db, [first, second, third])
    assert rows[first]["verified_at"] is not None, rows[first]
    assert [rows[i]["superseded_by"] for i in (second, third)] == [first, first], rows
    ledger.check(db, [tid])


def test_a_run_reports_what_it_gave_up_on(api, db, receipts, simulator, iapctl):
    """A receipt answered 21000 (asking again will not help) is given up at once; one Apple keeps
    answering 21005 after --max-attempts. The output names each, and SQL keeps the final state."""
    user_id = new_user_id()
    retry = ("retry-pending", "--minimum-age", "0", "--max-attempts", "2", "--backoff", "0")
    flush_backlog(iapctl)
    never_settling_receipt(api, receipts, simulator, user_id)
    [unreadable] = receipt_ids_of(db, user_id)

    first = iapctl(*retry)

    assert f"receipt {unreadable}" in first and "21000" in first, first
    simulator.reset()
    unverified_receipt(api, receipts, simulator, user_id)
    [unavailable] = set(receipt_ids_of(db, user_id)) - {unreadable}
    simulator.control(force_status=21005)

    second, third = iapctl(*retry), iapctl(*retry)

    assert f"receipt {unavailable}" not in second, second
    assert f"receipt {unavailable} after 2 attempt(s)" in third, third
    rows = retry_columns(db, [unreadable, unavailable])
    assert rows[unreadable]["retry_final_state"] == "gave_up" and rows[unreadable]["retry_attempts"] == 1, rows
    assert rows[unavailable]["retry_final_state"] == "gave_up" and rows[unavailable]["retry_attempts"] == 2, rows
    assert all(row["verified_at"] is None and row["retry_final_reason"] for row in rows.values()), rows
    assert iapctl(*retry).strip() == "retried 0 receipt(s)"
