"""`iapctl prune --older-than 400d`: the bytes of receipts and JWS past retention go, everything else
stays (SHA-256, audit rows, Apple's answers, transactions, events), and a row whose verification is
still open keeps its bytes so that retry-pending can still deliver the purchase."""
import importlib
import os
import subprocess
from pathlib import Path

from invariants import assert_events_follow_transactions, receipt_sha256
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id
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


def test_prune_refuses_a_period_that_is_not_days(iapctl):
    result = subprocess.run([str(Path(__file__).resolve().parents[2] / ".build" / "release" / "iapctl"), "prune",
                             "--older-than", "13 months"], capture_output=True, text=True, env=os.environ)
    assert result.returncode != 0 and "400d" in result.stderr, result.stderr
