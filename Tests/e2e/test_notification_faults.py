"""Notifications while MariaDB stops: none is lost. Each one is either answered 200 and applied, or
answered 5xx (Apple sends it again) and applied when sent again; none is applied twice.

The outage falls at known points of the burst, whatever the machine's speed: the first notifications are
answered before it; the next ones are inside the service when it comes (each waiting for its
transaction's row, which the test holds locked until MariaDB stops); the rest arrive while it is down."""
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pymysql
import pytest
import requests

from notification_support import (event_invariant_violations, events_of, notification_row, post, purchase, refunded,
                                  signed, signed_transaction)
from support import assert_verify_answer, lock_waiting_queries, new_user_id, placeholders, wait_until

BEFORE, INSIDE, WHILE_DOWN = 16, 4, 20   # INSIDE hold as many of the stack's 8 accept threads; the others answer
BURST = BEFORE + INSIDE + WHILE_DOWN
NOT_ACCEPTED = {503, "connection error"}


def hold_rows(db, transaction_ids):
    """A transaction of the test's own holding these `transactions` rows locked until it ends."""
    holder = pymysql.connect(**dict(db.connect_args, autocommit=False))
    with holder.cursor() as cursor:
        count = cursor.execute(f"SELECT transaction_id FROM transactions WHERE transaction_id IN"
                               f" ({placeholders(transaction_ids)}) FOR UPDATE", transaction_ids)
    assert count == len(transaction_ids)
    return holder


@pytest.mark.outage("mariadb")
def test_database_stopped_during_a_burst_of_notifications(api, db, stack):
    user = new_user_id()
    delivered = []
    for _ in range(BURST):
        payload = purchase()
        assert_verify_answer(api.post_json("/v1/transactions/verify", {
            "signed_transaction": signed_transaction(payload), "user_id": user}), "delivered")
        delivered.append(payload)
    notifications = [signed("REFUND", refunded(payload)) for payload in delivered]
    before = range(0, BEFORE)
    inside = range(BEFORE, BEFORE + INSIDE)
    while_down = range(BEFORE + INSIDE, BURST)
    answers = {}

    def send(index):
        jws, _ = notifications[index]
        try:
            answers[index] = post(api, jws).status_code
        except requests.RequestException:
            answers[index] = "connection error"

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(send, before))
    holder = hold_rows(db, [delivered[index]["transactionId"] for index in inside])
    try:
        with ThreadPoolExecutor(INSIDE) as pool:
            held = [pool.submit(send, index) for index in inside]
            wait_until(lambda: len(lock_waiting_queries("FROM transactions WHERE transaction_id")) == INSIDE, 30,
                       f"{INSIDE} notifications waiting for their rows")
            stack("stop mariadb")
            for future in held:
                future.result()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(send, while_down))
    finally:
        holder.close()
        stack("start mariadb")
        wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "the service healthy after MariaDB is back")

    print(f"notification burst with MariaDB stopped: {dict(Counter(answers.values()))}")
    assert [answers[index] for index in before] == [200] * BEFORE, answers
    # Cut off inside: MariaDB's shutdown ends the session holding the rows, and a notification waiting for them
    # may still commit before its own session is ended. Either way an acknowledged one is stored and applied,
    # and one not acknowledged is not half applied: its refund and its row go together.
    assert {answers[index] for index in inside} <= NOT_ACCEPTED | {200}, answers
    assert {answers[index] for index in while_down} <= NOT_ACCEPTED, answers
    for index in [*before, *(index for index in inside if answers[index] == 200)]:
        assert notification_row(db, notifications[index][1]["notificationUUID"])["effect"] == "refunded"
    for index in [*inside, *while_down]:
        row = notification_row(db, notifications[index][1]["notificationUUID"])
        state = db.transaction(delivered[index]["transactionId"])["state"]
        assert (row is None and state == "delivered") or (row["effect"] == "refunded" and state == "refunded"), (
            index, answers[index], row, state)
    for index in while_down:   # nothing of them was kept
        assert notification_row(db, notifications[index][1]["notificationUUID"]) is None
    # Apple sends each failed one again; so does this test, until every one is accepted.
    for index in [*inside, *while_down]:
        assert post(api, notifications[index][0]).status_code == 200
    for payload, (_, notification) in zip(delivered, notifications):
        assert db.transaction(payload["transactionId"])["state"] == "refunded"
        assert notification_row(db, notification["notificationUUID"])["effect"] == "refunded"
        assert [e[0] for e in events_of(db, payload["transactionId"])] == ["delivered", "refunded"]
    assert event_invariant_violations(db) == []
