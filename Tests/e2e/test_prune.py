"""`iapctl prune --older-than 400d`: the bytes of receipts and JWS past retention go, everything else
stays (SHA-256, audit rows, Apple's answers, transactions, events), and a row whose verification is
still open keeps its bytes so that retry-pending can still deliver the purchase."""
import importlib
import os
import subprocess
from pathlib import Path

from invariants import assert_events_follow_transactions, receipt_sha256
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until
from test_retry_pending import unverified_receipt

CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"


def rows_of(db, document):
    return db.receipts_with_sha256(receipt_sha256(document))


def age(db, document, days):
    db.execute("UPDATE receipts SET received_at = received_at - INTERVAL %s DAY WHERE sha256 = %s",
               days, receipt_sha256(document))


def test_prune_clears_old_bytes_and_keeps_hashes_answers_transactions_and_open_rows(
        api, db, receipts, simulator, iapctl):
    user_id = new_user_id()
    delivered_tid = new_transaction_id()
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=delivered_tid)])
    assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    signer = importlib.import_module("signed_data")
    payload = signer.transaction(PAY_6)
    jws = signer.sign(payload, str(CERTS))
    assert_verify_answer(api.post_json("/v1/transactions/verify", {"signed_transaction": jws, "user_id": user_id}),
                         "delivered")
    open_receipt, open_tid = unverified_receipt(api, receipts, simulator, user_id)
    recent = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert_verify_answer(api.verify(recent, user_id=user_id), "delivered")
    for document in (receipt, jws, open_receipt):
        age(db, document, 401)
    ids = [delivered_tid, payload["transactionId"]]
    before = {document: rows_of(db, document) for document in (receipt, jws, open_receipt, recent)}
    transactions_before = db.transactions(ids)

    output = iapctl("prune", "--older-than", "400d")

    assert "cleared the bytes of 2 receipt row(s)" in output and "1 older row(s) keep theirs" in output, output
    for document in (receipt, jws):
        [row] = rows_of(db, document)
        [was] = before[document]
        assert row["receipt_data"] is None, "an old verified row kept its bytes"
        assert {k: v for k, v in row.items() if k != "receipt_data"} == {
            k: v for k, v in was.items() if k != "receipt_data"}, "prune changed more than the bytes"
    assert rows_of(db, open_receipt) == before[open_receipt], "an open verification lost its bytes"
    assert rows_of(db, recent) == before[recent], "a row within retention was pruned"
    assert db.transactions(ids) == transactions_before
    assert_events_follow_transactions(db, ids)

    # Apple's answer stays: a client re-posting the old receipt is still answered from the database.
    simulator.reset_stats()
    assert_verify_answer(api.verify(receipt, user_id=user_id), "already_delivered")
    assert simulator.requests_to("production") == 0
    # The open one is still delivered by retry-pending, from the bytes it kept.
    iapctl("retry-pending", "--minimum-age", "0")
    assert db.delivered_count([open_tid]) == 1
    assert "cleared the bytes of 1 receipt row(s)" in iapctl("prune", "--older-than", "400d")


def bytes_of(db, receipt_id):
    """The row's receipt bytes as view receipt_bytes finds them, wherever they are stored (None: gone)."""
    return db.scalar("SELECT receipt_data FROM receipt_bytes WHERE receipt_id = %s", receipt_id)


def test_prune_keeps_the_bytes_a_replay_within_retention_reads(api, db, receipts, iapctl):
    """A replay answered from the database stores no bytes: they are in the row it reused (replay_of).
    That row past retention keeps them while the replay is within it (the bytes were posted again
    then), so the replay's pointer never names a row without bytes; once the replay is past
    retention too, they go."""
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "delivered")
    assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "already_delivered")
    # The replay's audit row is written just after its answer, by a thread of its own.
    def original_and_replay():
        rows = rows_of(db, receipt)
        return rows if len(rows) == 2 else None
    original, replay = wait_until(original_and_replay, 30, "the replay's audit row")
    assert replay["replay_of"] == original["receipt_id"] and replay["receipt_data"] is None, replay
    assert original["receipt_data"] == receipt and bytes_of(db, replay["receipt_id"]) == receipt
    db.execute("UPDATE receipts SET received_at = received_at - INTERVAL 401 DAY WHERE receipt_id = %s",
               original["receipt_id"])

    output = iapctl("prune", "--older-than", "400d")

    assert rows_of(db, receipt)[0]["receipt_data"] == receipt, (
        "prune cleared the bytes of a row that a replay within retention reads through replay_of: " + output)
    assert bytes_of(db, replay["receipt_id"]) == receipt
    assert "whose bytes a newer or still open row reads through bytes_in or replay_of" in output, output

    db.execute("UPDATE receipts SET received_at = received_at - INTERVAL 401 DAY WHERE receipt_id = %s",
               replay["receipt_id"])
    output = iapctl("prune", "--older-than", "400d")

    assert "cleared the bytes of 1 receipt row(s)" in output, output
    assert [row["receipt_data"] for row in rows_of(db, receipt)] == [None, None]
    assert bytes_of(db, replay["receipt_id"]) is None


def test_prune_refuses_a_period_that_is_not_days(iapctl):
    result = subprocess.run([str(Path(__file__).resolve().parents[2] / ".build" / "release" / "iapctl"), "prune",
                             "--older-than", "13 months"], capture_output=True, text=True, env=os.environ)
    assert result.returncode != 0 and "400d" in result.stderr, result.stderr
