"""The replay short-cut when the replay cache does not know a receipt (issue 15).

The accept threads look a receipt up in memory only; the receipt recorder asks the database for the
receipts of its whole batch in one query before recording them. A receipt verified before a restart (or
by another instance) must still be answered from the database, without Apple, with its audit row naming
the row it reused; and one the database does not know must still be recorded and go to Apple.
"""
import base64
import hashlib
from concurrent.futures import ThreadPoolExecutor

from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until


def sha256_of(receipt_data):
    return hashlib.sha256(base64.b64decode(receipt_data)).hexdigest()


def audit_rows(db, receipt, count):
    """The receipt's audit rows once there are `count` (a replay's is written just after its answer)."""
    wait_until(lambda: len(db.receipts_with_sha256(sha256_of(receipt))) >= count, 10, f"{count} audit rows")
    rows = db.receipts_with_sha256(sha256_of(receipt))
    assert len(rows) == count, rows
    return rows


def test_replays_after_a_restart_are_answered_from_the_database_without_apple(
        api, db, receipts, simulator, stack):
    user_id, thief = new_user_id(), new_user_id()
    bought = [receipts.purchase(PAY_6, transaction_id=new_transaction_id()) for _ in range(3)]
    receipt = receipts.app_receipt(bought)
    assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    delivered = db.transactions([b["transaction_id"] for b in bought])
    stack("stop iap-fcgi")
    stack("start iap-fcgi")  # an empty replay cache
    simulator.reset_stats()

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda user: api.verify(receipt, user_id=user), [user_id] * 6 + [thief] * 2))

    for response in answers:
        body = assert_verify_answer(response, "already_delivered")
        assert {t["state"] for t in body["transactions"]} == {"already_delivered"}
    assert simulator.stats()["production"]["requests"] == 0, "a replay after a restart went to Apple"
    assert db.transactions([b["transaction_id"] for b in bought]) == delivered
    assert db.orders_of(thief) == []
    first, *replays = audit_rows(db, receipt, 9)
    assert first["replay_of"] is None and first["receipt_data"] == receipt
    assert all(r["replay_of"] == first["receipt_id"] and r["receipt_data"] is None for r in replays)
    assert sorted(r["user_id"] for r in replays) == sorted([user_id] * 6 + [thief] * 2)


def test_new_receipts_in_one_batch_with_a_replay_still_go_to_apple(api, db, receipts, simulator, stack):
    user_id = new_user_id()
    old = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert_verify_answer(api.verify(old, user_id=user_id), "delivered")
    stack("stop iap-fcgi")
    stack("start iap-fcgi")
    simulator.reset_stats()
    new = [receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())]) for _ in range(7)]

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda receipt: api.verify(receipt, user_id=user_id), [old] + new))

    assert_verify_answer(answers[0], "already_delivered")
    for response in answers[1:]:
        assert_verify_answer(response, "delivered")
    assert simulator.stats()["production"]["requests"] == len(new)
    for receipt in new:
        (row,) = audit_rows(db, receipt, 1)
        assert row["replay_of"] is None and row["receipt_data"] == receipt and row["apple_status"] == 0
