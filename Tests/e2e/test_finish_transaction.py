"""Finish Transaction for deliveries with no client in the loop (docs/api.md, the end of "POST
/v1/notifications/apple"): a transaction delivered by a notification or `iapctl lookup --deliver` gets a
`transaction_finishes` row in its delivery's database transaction, and the service's worker calls
`POST /inApps/v1/transactions/{id}/finish` (the simulator records each call) until Apple answers 2xx,
then sets `transactions.finished_at` and drops the row. A client's own delivery is never finished by
the service. No test sleeps: each waits for a row or a call, and holds Apple's fault until it saw it."""
from datetime import datetime, timedelta, timezone

import requests

from notification_support import post, purchase, send, signed, verify_jws
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until
from test_notification_sync import UNREACHABLE, attempted, simulator_send, synced
from test_operations_metrics import delta, scrape, value
from test_server_api import register_order, register_transaction, run_iapctl
from test_transaction_id_verify import OwnService

# Apple's backoff starts at 1 s and doubles: a few retries fit well within this on a loaded machine.
DEADLINE_S = 60


def finish_calls(simulator, transaction_id):
    """The simulator's finish calls for `transaction_id`, oldest first: [{environment, status, at_ms}]."""
    response = requests.get(simulator.base_url + "/finish/calls", timeout=10)
    assert response.status_code == 200, response.text
    return [call for call in response.json() if call["transaction_id"] == transaction_id]


def finish_fault(simulator, **changes):
    """POST /finish/control: fault (404, 429, 500 or None), fail_next, retry_after_ms."""
    response = requests.post(simulator.base_url + "/finish/control", json=changes, timeout=10)
    assert response.status_code == 200, response.text


def outbox_row(db, transaction_id):
    return db.one("SELECT * FROM transaction_finishes WHERE transaction_id = %s", transaction_id)


def wait_finished(db, transaction_id):
    """Waits until the worker recorded Apple's 2xx: finished_at set and the outbox row gone (after which
    nothing calls Apple for it again). Returns finished_at."""
    def done():
        row = db.transaction(transaction_id)
        return row["finished_at"] if row["finished_at"] is not None and outbox_row(db, transaction_id) is None else None
    return wait_until(done, DEADLINE_S, f"transaction {transaction_id} finished")


def deliver_by_notification(api, db):
    """A ONE_TIME_CHARGE whose token names an open order: delivered, no client involved. (payload, signedPayload)."""
    order = api.create_order(new_user_id())
    payload = purchase(app_account_token=order["order_id"])
    jws, _ = signed("ONE_TIME_CHARGE", payload)
    answer = post(api, jws)
    assert answer.status_code == 200, answer.text
    assert db.transaction(payload["transactionId"])["state"] == "delivered"
    return payload, jws


def test_a_notification_delivery_is_finished_once_at_apple(api, db, simulator):
    before = scrape()
    payload, _ = deliver_by_notification(api, db)
    tid = payload["transactionId"]
    owed = outbox_row(db, tid)
    assert owed is None or owed["environment"] == "Production", owed

    finished_at = wait_finished(db, tid)

    calls = finish_calls(simulator, tid)
    assert [(c["environment"], c["status"]) for c in calls] == [("production", 200)], calls
    assert finished_at >= db.transaction(tid)["delivered_at"]
    assert delta(before, scrape(), "iap_transaction_finishes_total", result="finished") >= 1


def test_apple_failing_is_retried_with_backoff_until_a_2xx(api, db, simulator):
    finish_fault(simulator, fault=500, fail_next=0)
    before = scrape()
    payload, _ = deliver_by_notification(api, db)
    tid = payload["transactionId"]

    failed = wait_until(lambda: (lambda row: row if row and row["attempts"] >= 1 else None)(outbox_row(db, tid)),
                        DEADLINE_S, "a failed finish recorded on its outbox row")
    assert failed["last_error"] == "HTTP 500, errorCode 5000000", failed
    assert failed["next_attempt_at"] > failed["created_at"], "the retry waits its backoff"
    assert db.transaction(tid)["finished_at"] is None
    wait_until(lambda: value(scrape(), "iap_transaction_finishes_pending") >= 1, DEADLINE_S,
               "iap_transaction_finishes_pending counts the row owed")
    finish_fault(simulator, fault=None)

    wait_finished(db, tid)
    statuses = [c["status"] for c in finish_calls(simulator, tid)]
    assert statuses[-1] == 200 and statuses.count(200) == 1, statuses
    assert set(statuses[:-1]) == {500}, statuses
    assert delta(before, scrape(), "iap_transaction_finishes_total", result="http_5xx") >= 1


def test_a_429_is_called_again_not_before_its_retry_after(api, db, simulator):
    finish_fault(simulator, fault=429, fail_next=1, retry_after_ms=3000)
    payload, _ = deliver_by_notification(api, db)
    tid = payload["transactionId"]

    wait_finished(db, tid)
    calls = finish_calls(simulator, tid)
    assert [c["status"] for c in calls] == [429, 200], calls
    # Retry-After was the simulator's clock at the 429 + 3000 ms; its arrival was logged just after.
    assert calls[1]["at_ms"] >= calls[0]["at_ms"] + 3000 - 5, calls


def test_a_sandbox_notification_delivery_is_finished_in_the_sandbox(api, db, simulator, service_settings):
    order_user = new_user_id()
    service_settings.apply(sandbox_users=order_user)
    order = api.create_order(order_user)
    payload = purchase(app_account_token=order["order_id"], environment="Sandbox")
    send(api, "ONE_TIME_CHARGE", payload, environment="Sandbox")
    assert db.transaction(payload["transactionId"])["state"] == "delivered"

    wait_finished(db, payload["transactionId"])
    calls = finish_calls(simulator, payload["transactionId"])
    assert [(c["environment"], c["status"]) for c in calls] == [("sandbox", 200)], calls


def test_lookup_deliver_is_finished_by_the_service(db, simulator):
    user = new_user_id()
    registered = register_transaction(simulator)
    tid = registered["transaction_id"]
    order_id = register_order(simulator, [tid])

    status, out, err, _ = run_iapctl("lookup", order_id, "--user", user, "--deliver")
    assert status == 0, (out, err)
    assert out.strip().split("\t")[3:] == ["delivered", "yes", "delivered"], out
    assert db.transaction(tid)["user_id"] == user

    wait_finished(db, tid)
    calls = finish_calls(simulator, tid)
    assert [(c["environment"], c["status"]) for c in calls] == [("production", 200)], calls


def test_notifications_sync_delivery_is_finished_by_the_service(api, db, simulator):
    user = new_user_id()
    order = api.create_order(user)
    charge = simulator_send(simulator, UNREACHABLE, "ONE_TIME_CHARGE",
                            {"product_id": PAY_6, "app_account_token": order["order_id"]})
    wait_until(lambda: attempted(simulator, 1), 10, "the notification attempted once")
    tid = charge["transaction_id"]

    out = synced((datetime.now(timezone.utc) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert "applied 1" in out, out
    assert (db.transaction(tid)["state"], db.transaction(tid)["user_id"]) == ("delivered", user)

    wait_finished(db, tid)
    calls = finish_calls(simulator, tid)
    assert [(c["environment"], c["status"]) for c in calls] == [("production", 200)], calls


def test_a_client_verified_delivery_is_never_finished_by_the_service(api, db, simulator, receipts):
    by_receipt = new_transaction_id()
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=by_receipt)])
    assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "delivered")
    order = api.create_order(new_user_id())
    by_jws = purchase(app_account_token=order["order_id"])
    assert_verify_answer(verify_jws(api, by_jws), "delivered")
    # The outbox row would have been written with the delivery: none means no call is ever made.
    for tid in (by_receipt, by_jws["transactionId"]):
        assert db.transaction(tid)["state"] == "delivered"
        assert outbox_row(db, tid) is None, tid

    marker, _ = deliver_by_notification(api, db)
    wait_finished(db, marker["transactionId"])
    for tid in (by_receipt, by_jws["transactionId"]):
        assert finish_calls(simulator, tid) == [], tid
        assert db.transaction(tid)["finished_at"] is None


def test_the_same_notification_twice_finishes_once(api, db, simulator):
    finish_fault(simulator, fault=500, fail_next=0)
    payload, jws = deliver_by_notification(api, db)
    tid = payload["transactionId"]
    wait_until(lambda: (outbox_row(db, tid) or {}).get("attempts", 0) >= 1, DEADLINE_S, "a failed finish recorded")

    again = post(api, jws)  # Apple's retry while the finish is owed
    assert again.status_code == 200, again.text
    assert db.scalar("SELECT COUNT(*) FROM transaction_finishes WHERE transaction_id = %s", tid) == 1
    finish_fault(simulator, fault=None)
    wait_finished(db, tid)

    once_more = post(api, jws)  # and after it was finished
    assert once_more.status_code == 200, once_more.text
    assert outbox_row(db, tid) is None, "nothing owed again"
    assert [c["status"] for c in finish_calls(simulator, tid)].count(200) == 1


def test_two_instances_on_one_database_finish_each_transaction_once(api, db, simulator, tmp_path):
    """A second iap-fcgi (its own worker) on the stack's database: both lease the same outbox. Apple
    fails until every row was tried at least once, so that both workers keep meeting the same due rows."""
    second = OwnService(tmp_path)
    try:
        finish_fault(simulator, fault=500, fail_next=0)
        tids = [deliver_by_notification(api, db)[0]["transactionId"] for _ in range(12)]
        wait_until(lambda: all((outbox_row(db, tid) or {}).get("attempts", 0) >= 1 for tid in tids), DEADLINE_S,
                   "every finish failed once")
        finish_fault(simulator, fault=None)
        for tid in tids:
            wait_finished(db, tid)
    finally:
        second.stop()
    for tid in tids:
        statuses = [c["status"] for c in finish_calls(simulator, tid)]
        assert statuses.count(200) == 1 and set(statuses) == {500, 200}, (tid, statuses)
    assert "finish: finishing at Apple" in second.log_path.read_text()


def test_a_row_another_instance_holds_is_called_only_once_its_lease_ends(db, simulator):
    """The held row has been due longer than the free one: a worker that leased it regardless would have
    taken it first (the longest due first). So once the free one is finished, the held one was passed
    over, not just late."""
    held, free = new_transaction_id(), new_transaction_id()
    db.execute("INSERT INTO transaction_finishes (transaction_id, environment, created_at, next_attempt_at,"
               " lease_expires_at) VALUES (%s, 'Production', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) - INTERVAL 1 HOUR,"
               " UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)", held)
    lease = outbox_row(db, held)["lease_expires_at"]
    db.execute("INSERT INTO transaction_finishes (transaction_id, environment, created_at, next_attempt_at)"
               " VALUES (%s, 'Production', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) - INTERVAL 1 MINUTE)", free)
    wait_until(lambda: outbox_row(db, free) is None, DEADLINE_S, f"the finish of {free} recorded")
    assert [c["status"] for c in finish_calls(simulator, free)] == [200]
    untouched = outbox_row(db, held)
    assert (untouched["attempts"], untouched["lease_expires_at"]) == (0, lease)
    assert finish_calls(simulator, held) == []

    db.execute("UPDATE transaction_finishes SET lease_expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND"
               " WHERE transaction_id = %s", held)   # the other instance died: its lease ends
    wait_until(lambda: outbox_row(db, held) is None, DEADLINE_S, f"the finish of {held} recorded")
    assert [c["status"] for c in finish_calls(simulator, held)] == [200]


def test_a_transaction_id_that_is_not_digits_is_never_sent_and_ends_given_up(db, simulator):
    """`1/../{victim}` in the URL is `/{victim}/finish` once dot segments are resolved: it would finish
    another transaction. The id is never sent; its row says why and is never due again."""
    victim = new_transaction_id()
    crafted = f"1/../{victim}"
    before = scrape()
    db.execute("INSERT INTO transaction_finishes (transaction_id, environment, created_at, next_attempt_at)"
               " VALUES (%s, 'Production', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))", crafted)

    def recorded():
        row = outbox_row(db, crafted)
        return row is None or row["last_error"] is not None
    wait_until(recorded, DEADLINE_S, "the crafted row's outcome recorded")

    assert finish_calls(simulator, victim) == [] and finish_calls(simulator, crafted) == []
    row = outbox_row(db, crafted)
    assert row is not None and row["last_error"] == "never sent: the transaction id is not decimal digits", row
    assert (row["attempts"], row["lease_expires_at"]) == (0, None), row
    assert row["next_attempt_at"].year == 9999, "never due again, and not deleted: the operator sees it"
    assert delta(before, scrape(), "iap_transaction_finishes_total", result="invalid_id") == 1
    db.execute("DELETE FROM transaction_finishes WHERE transaction_id = %s", crafted)
