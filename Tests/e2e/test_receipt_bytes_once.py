"""A receipt's bytes are stored once (migration 012): a request that goes to Apple with bytes already
stored in a recent row leaves `receipt_data` NULL and names that row in `bytes_in`. Every row's bytes
stay recoverable (view `receipt_bytes`, or by following the pointer), retry-pending reads them through
the pointer, and `iapctl prune` keeps the bytes an old row holds for a row within retention or open."""
import base64
import hashlib
import threading

from invariants import Ledger
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, placeholders, wait_until
from test_retry_pending import APPLE_CALLS_PER_ENVIRONMENT

POSTS = 4


def receipt_of_one_purchase(receipts):
    """(receipt_data, transaction id) of a new receipt holding one new purchase."""
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    return receipts.app_receipt([bought]), bought["transaction_id"]


def sha256_of(receipt_data):
    return hashlib.sha256(base64.b64decode(receipt_data)).hexdigest()


def rows_of(db, receipt_data):
    return db.receipts_with_sha256(sha256_of(receipt_data))


def rows_when_there_are(db, receipt_data, count):
    rows = rows_of(db, receipt_data)
    return rows if len(rows) == count else None


def followed_bytes(db, row):
    """The row's bytes by following its pointers by hand: its own, else those of the row `bytes_in`
    names, else those of the row a replay reused (`replay_of`) or the row that one names."""
    if row["receipt_data"] is not None:
        return row["receipt_data"]
    for pointer in ("bytes_in", "replay_of"):
        if row[pointer] is not None:
            return followed_bytes(db, db.receipt(row[pointer]))
    return None


def assert_every_row_recovers_its_bytes(db, rows):
    """Both ways (the view, the pointers by hand) give bytes whose SHA-256 is the row's own."""
    ids = [row["receipt_id"] for row in rows]
    view = {row["receipt_id"]: row for row in db.query(
        f"SELECT receipt_id, receipt_data, stored_in FROM receipt_bytes WHERE receipt_id IN ({placeholders(ids)})",
        *ids)}
    for row in rows:
        by_hand = followed_bytes(db, row)
        assert by_hand is not None, f"row {row['receipt_id']} reaches no bytes: {row}"
        assert sha256_of(by_hand) == row["sha256"], f"row {row['receipt_id']} reaches other bytes"
        assert view[row["receipt_id"]]["receipt_data"] == by_hand, view[row["receipt_id"]]
        assert view[row["receipt_id"]]["stored_in"] is not None


def assert_stored_once(db, receipt_data, rows):
    """Exactly one row holds the bytes; every other row that went to Apple names it in bytes_in."""
    holders = [row for row in rows if row["receipt_data"] is not None]
    assert len(holders) == 1, f"{len(holders)} rows hold the bytes: {[row['receipt_id'] for row in holders]}"
    [holder] = holders
    assert holder["receipt_data"] == receipt_data and holder["bytes_in"] is None, holder
    for row in rows:
        if row is not holder and row["replay_of"] is None:
            assert (row["receipt_data"], row["bytes_in"]) == (None, holder["receipt_id"]), row
    return holder


def post_while_apple_fails(api, simulator, ledger, receipt, user_id, **fault):
    """One verify request while Apple fails every call it makes: answered retry_later."""
    simulator.control(fail_next=APPLE_CALLS_PER_ENVIRONMENT, **fault)
    response = ledger.post(api, receipt, user_id=user_id)
    assert_verify_answer(response, "retry_later")
    assert simulator.control()["fail_next"] == 0, "the fault outlived the request's calls"
    return response


def test_a_receipt_retried_while_apple_fails_stores_its_bytes_once(api, db, receipts, simulator, iapctl):
    """Apple unavailable (21005), then dropping the connection, then too slow (timeouts): each retry
    leaves its audit row without the bytes; retry-pending delivers the purchase once, from the bytes
    it reads through the pointer, and a replay after that stores none either."""
    ledger, user_id = Ledger("bytes stored once over retries"), new_user_id()
    receipt, tid = receipt_of_one_purchase(receipts)
    for _ in range(POSTS - 2):
        post_while_apple_fails(api, simulator, ledger, receipt, user_id, force_status=21005)
    post_while_apple_fails(api, simulator, ledger, receipt, user_id, drop_connection=True)
    simulator.reset()
    simulator.control(latency_ms=60_000)   # longer than IAP_APPLE_TIMEOUT_MS: every call times out
    assert_verify_answer(ledger.post(api, receipt, user_id=user_id), "retry_later")
    simulator.reset()

    rows = rows_of(db, receipt)
    assert len(rows) == POSTS and all(row["verified_at"] is None for row in rows), rows
    holder = assert_stored_once(db, receipt, rows)
    assert holder["receipt_id"] == rows[0]["receipt_id"], "the first row stores the bytes"
    assert_every_row_recovers_its_bytes(db, rows)

    simulator.reset_stats()
    output = iapctl("retry-pending", "--minimum-age", "0", "--limit", "100000")

    assert simulator.requests_to("production") >= 1, output
    assert db.delivered_count([tid]) == 1, output
    rows = rows_of(db, receipt)
    assert [row["retry_final_state"] for row in rows[1:]] == ["superseded"] * (POSTS - 1), rows
    assert rows[0]["verified_at"] is not None and rows[0]["apple_status"] == 0, rows[0]
    again = ledger.post(api, receipt, user_id=user_id)
    assert_verify_answer(again, "already_delivered")
    # The replay's audit row is written just after its answer, by a thread of its own.
    rows = wait_until(lambda: rows_when_there_are(db, receipt, POSTS + 1), 10, "the replay's audit row")
    assert rows[-1]["replay_of"] is not None and rows[-1]["bytes_in"] is None, rows[-1]
    assert_stored_once(db, receipt, rows)
    assert_every_row_recovers_its_bytes(db, rows)
    ledger.check(db, [tid])


def test_retry_pending_delivers_a_row_whose_bytes_are_in_another_row(api, db, receipts, simulator, iapctl):
    """The row that holds the bytes is closed (given up); the open row naming it is the one retried."""
    ledger, user_id = Ledger("retry-pending through bytes_in"), new_user_id()
    receipt, tid = receipt_of_one_purchase(receipts)
    for _ in range(2):
        post_while_apple_fails(api, simulator, ledger, receipt, user_id, force_status=21005)
    holder, reader = rows_of(db, receipt)
    assert (reader["receipt_data"], reader["bytes_in"]) == (None, holder["receipt_id"]), reader
    db.execute("UPDATE receipts SET retry_final_state = 'gave_up', retry_final_reason = 'the test'"
               " WHERE receipt_id = %s", holder["receipt_id"])

    output = iapctl("retry-pending", "--minimum-age", "0", "--limit", "100000")

    assert "bytes are gone" not in output, output
    assert db.delivered_count([tid]) == 1, output
    assert db.receipt(reader["receipt_id"])["verified_at"] is not None
    ledger.check(db, [tid])


def test_the_same_receipt_posted_at_once_stores_its_bytes_once(api, db, receipts, simulator):
    """Requests at the same moment are recorded together (one batch, or several): one row stores the
    bytes, the others name it, whichever way the recorder grouped them."""
    ledger, user_id = Ledger("the same receipt at once"), new_user_id()
    receipt, _ = receipt_of_one_purchase(receipts)
    simulator.control(force_status=21005)
    posts = [threading.Thread(target=ledger.post, args=(api, receipt), kwargs={"user_id": user_id})
             for _ in range(8)]
    for post in posts:
        post.start()
    for post in posts:
        post.join(timeout=120)

    assert ledger.statuses["retry_later"] == 8, ledger.statuses
    rows = rows_of(db, receipt)
    assert len(rows) == 8, rows
    assert_stored_once(db, receipt, rows)
    assert_every_row_recovers_its_bytes(db, rows)


def test_a_pending_receipt_posted_again_stores_its_bytes_once(api, db, receipts):
    """A receipt that does not hold the named transaction yet (202 pending) is posted again."""
    user_id = new_user_id()
    receipt, _ = receipt_of_one_purchase(receipts)
    missing = new_transaction_id()
    for _ in range(3):
        assert_verify_answer(api.verify(receipt, user_id=user_id, transaction_id=missing), "pending")

    rows = rows_of(db, receipt)
    assert len(rows) == 3, rows
    assert_stored_once(db, receipt, rows)
    assert_every_row_recovers_its_bytes(db, rows)


def test_a_new_receipt_still_stores_its_bytes(api, db, receipts):
    user_id = new_user_id()
    receipts_posted = [receipt_of_one_purchase(receipts) for _ in range(3)]
    for receipt, _ in receipts_posted:
        assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    for receipt, tid in receipts_posted:
        [row] = rows_of(db, receipt)
        assert (row["receipt_data"], row["bytes_in"], row["replay_of"]) == (receipt, None, None), row
        assert db.transaction(tid)["receipt_id"] == row["receipt_id"]


def age(db, receipt_ids, days):
    db.execute(f"UPDATE receipts SET received_at = received_at - INTERVAL %s DAY"
               f" WHERE receipt_id IN ({placeholders(receipt_ids)})", days, *receipt_ids)


def test_prune_keeps_the_bytes_a_row_within_retention_reads(api, db, receipts, simulator, iapctl):
    """An old row holds the bytes of a row within retention: prune keeps them there; once every row of
    those bytes is past retention, they go, and the hashes, answers and transaction stay."""
    ledger, user_id = Ledger("prune and bytes_in"), new_user_id()
    receipt, tid = receipt_of_one_purchase(receipts)
    post_while_apple_fails(api, simulator, ledger, receipt, user_id, force_status=21005)
    assert_verify_answer(ledger.post(api, receipt, user_id=user_id), "delivered")   # Apple is back
    iapctl("retry-pending", "--minimum-age", "0", "--limit", "100000")   # closes the first: superseded
    holder, reader = rows_of(db, receipt)
    assert reader["bytes_in"] == holder["receipt_id"] and reader["verified_at"] is not None, reader
    assert holder["retry_final_state"] == "superseded", holder
    age(db, [holder["receipt_id"]], 401)

    output = iapctl("prune", "--older-than", "400d")

    assert "whose bytes a newer or still open row reads through bytes_in" in output, output
    rows = rows_of(db, receipt)
    assert rows[0]["receipt_data"] == receipt, "prune cleared bytes a row within retention reads"
    assert_every_row_recovers_its_bytes(db, rows)

    age(db, [reader["receipt_id"]], 401)
    transaction_before = db.transaction(tid)
    iapctl("prune", "--older-than", "400d")

    rows = rows_of(db, receipt)
    assert [row["receipt_data"] for row in rows] == [None, None], "bytes past retention everywhere were kept"
    assert rows[1]["bytes_in"] == holder["receipt_id"] and rows[1]["apple_response"], rows[1]
    assert db.transaction(tid) == transaction_before
    ledger.check(db, [tid])


def test_prune_keeps_the_bytes_an_open_row_reads_and_retry_pending_delivers_it(
        api, db, receipts, simulator, iapctl):
    """Both rows past retention: the holder is closed, the row naming it still open. Prune keeps the
    bytes, so retry-pending can still deliver the purchase."""
    ledger, user_id = Ledger("prune, bytes_in and an open row"), new_user_id()
    receipt, tid = receipt_of_one_purchase(receipts)
    for _ in range(2):
        post_while_apple_fails(api, simulator, ledger, receipt, user_id, force_status=21005)
    holder, reader = rows_of(db, receipt)
    db.execute("UPDATE receipts SET retry_final_state = 'gave_up', retry_final_reason = 'the test'"
               " WHERE receipt_id = %s", holder["receipt_id"])
    age(db, [holder["receipt_id"], reader["receipt_id"]], 401)

    iapctl("prune", "--older-than", "400d")

    assert db.receipt(holder["receipt_id"])["receipt_data"] == receipt, "prune cleared bytes an open row reads"
    iapctl("retry-pending", "--minimum-age", "0", "--limit", "100000")
    assert db.delivered_count([tid]) == 1
    iapctl("prune", "--older-than", "400d")
    assert [row["receipt_data"] for row in rows_of(db, receipt)] == [None, None]
    ledger.check(db, [tid])


def test_every_pointer_in_the_table_names_a_row_that_holds_the_same_bytes(db):
    """Over every row the suite has written so far: `bytes_in` names an existing row of the same sha256
    that stores its bytes itself (no chains), and only a row past retention (the tests' 400 days) has
    lost them to prune."""
    wrong = db.query(
        "SELECT r.receipt_id, r.bytes_in, r.sha256, h.sha256 AS holder_sha256, h.bytes_in AS holder_bytes_in,"
        " r.receipt_data IS NULL AS reader_without_bytes, h.receipt_data IS NULL AS holder_without_bytes"
        " FROM receipts r LEFT JOIN receipts h ON h.receipt_id = r.bytes_in"
        " WHERE r.bytes_in IS NOT NULL AND (h.receipt_id IS NULL OR h.sha256 <> r.sha256"
        "   OR h.bytes_in IS NOT NULL OR r.receipt_data IS NOT NULL"
        "   OR (h.receipt_data IS NULL AND r.received_at >= UTC_TIMESTAMP(3) - INTERVAL 400 DAY)) LIMIT 20")
    assert not wrong, f"rows whose bytes_in does not lead to their bytes: {wrong}"
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE bytes_in IS NOT NULL") > 0, "no pointer was checked"
