"""Receipt ids come from the database, whatever the server's AUTO_INCREMENT
numbering is now: a failover or a Galera membership change can change
`auto_increment_increment` and `auto_increment_offset` under a running service,
and Apple's answer to a receipt must still land on that receipt's own row."""
import json
import threading
from concurrent.futures import ThreadPoolExecutor

from server_admin import end_service_sessions, globals_set
from support import PAY_6, PAY_30, assert_verify_answer, new_transaction_id, new_user_id, wait_until

BURST = 40


def assert_rows_hold_their_own_answers(db, receipts, user_id, expected_rows):
    """Every receipts row of the user is verified with Apple's answer to its own bytes."""
    stored = db.query("SELECT receipt_id, receipt_data, apple_status, apple_response, verified_at FROM receipts"
                      " WHERE user_id = %s", user_id)
    assert len(stored) == expected_rows, f"{len(stored)} receipts rows for {expected_rows} receipts posted"
    mixed = []
    for row in stored:
        posted = {p["transaction_id"] for p in receipts.decode(row["receipt_data"])["in_app"]}
        answered = (set() if row["apple_response"] is None else
                    {t["transaction_id"] for t in json.loads(row["apple_response"])["receipt"]["in_app"]})
        if row["verified_at"] is None or row["apple_status"] != 0 or answered != posted:
            mixed.append((row["receipt_id"], row["apple_status"], sorted(posted), sorted(answered)))
    assert not mixed, f"{len(mixed)} of {len(stored)} rows do not hold Apple's answer to their own bytes: {mixed[:5]}"


def test_receipt_rows_hold_their_own_answers_after_the_numbering_changes(api, db, receipts):
    user_id = new_user_id()
    # The service's sessions have recorded receipts under the server's numbering as it was.
    first = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert_verify_answer(api.verify(first, user_id=user_id), "delivered")

    own_session = db.scalar("SELECT CONNECTION_ID()")
    with globals_set(auto_increment_increment=7, auto_increment_offset=3):
        # As after a failover: the service's sessions end, the new ones number rows 7 apart.
        end_service_sessions(spare_ids=[own_session])
        wait_until(lambda: api.get("/v1/health").status_code == 200, 10, "the service healthy again")
        burst = [receipts.app_receipt([receipts.purchase(product, transaction_id=new_transaction_id())])
                 for product in [PAY_6, PAY_30] * (BURST // 2)]
        start = threading.Barrier(len(burst), timeout=30)

        def post(receipt):
            start.wait()
            return api.verify(receipt, user_id=user_id)

        with ThreadPoolExecutor(max_workers=len(burst)) as pool:
            responses = list(pool.map(post, burst))
        end_service_sessions(spare_ids=[own_session])
    end_service_sessions(spare_ids=[own_session])   # the service's sessions back on the server's own numbering
    wait_until(lambda: api.get("/v1/health").status_code == 200, 10, "the service healthy again")

    ids = db.query("SELECT receipt_id FROM receipts WHERE user_id = %s", user_id)
    spaced = [row["receipt_id"] for row in ids if row["receipt_id"] % 7 == 3]
    assert len(spaced) >= BURST, f"the burst was not numbered 7 apart: {sorted(r['receipt_id'] for r in ids)}"
    statuses = [response.json().get("status") for response in responses]
    assert statuses == ["delivered"] * len(burst), f"answers: {statuses}"
    assert_rows_hold_their_own_answers(db, receipts, user_id, len(burst) + 1)
