"""Notifications while MariaDB stops: none is lost. Each one is either answered 200 and applied, or
answered 5xx (Apple sends it again) and applied when sent again; none is applied twice."""
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from notification_support import (event_invariant_violations, events_of, notification_row, post, purchase, refunded,
                                  signed, signed_transaction)
from support import assert_verify_answer, new_user_id, wait_until

BURST = 40


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

    answers = {}
    lock = threading.Lock()

    def send(index):
        jws, _ = notifications[index]
        try:
            status = post(api, jws).status_code
        except requests.RequestException:
            status = "connection error"
        with lock:
            answers[index] = status
        time.sleep(0.05)   # spread the burst over the outage

    def stop_database():
        time.sleep(0.3)
        stack("stop mariadb")

    stopper = threading.Thread(target=stop_database)
    stopper.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(send, range(BURST)))
        stopper.join()
    finally:
        stack("start mariadb")
        wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "the service healthy after MariaDB is back")

    counts = Counter(answers.values())
    print(f"notification burst with MariaDB stopped: {dict(counts)}")
    assert set(counts) <= {200, 503, "connection error"}, counts
    assert counts[200] >= 1 and counts[200] < BURST, f"the outage did not fall inside the burst: {counts}"
    for index, status in answers.items():
        if status == 200:
            assert notification_row(db, notifications[index][1]["notificationUUID"])["effect"] == "refunded"
    # Apple sends each failed one again; so does this test, until every one is accepted.
    for index, status in sorted(answers.items()):
        if status != 200:
            assert post(api, notifications[index][0]).status_code == 200
    for payload, (_, notification) in zip(delivered, notifications):
        assert db.transaction(payload["transactionId"])["state"] == "refunded"
        assert notification_row(db, notification["notificationUUID"])["effect"] == "refunded"
        assert [e[0] for e in events_of(db, payload["transactionId"])] == ["delivered", "refunded"]
    assert event_invariant_violations(db) == []
