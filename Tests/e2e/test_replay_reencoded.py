"""The replay short-cut knows an app receipt by what its signature covers (issue 32, migration 019): the
signed payload and the signer's signature, not the receipt's bytes. A copy re-encoded around the signature
(its unsigned certificate set repeated or reordered) is the same receipt: answered from the database
without another verifyReceipt call, its audit row naming the row it reused and keeping its own bytes."""
import base64

import receipt_asn1 as asn1
from crafted_receipts import SIGNED_DATA, certificate_copies
from invariants import Ledger
from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until
from test_receipt_bytes_once import assert_every_row_recovers_its_bytes, rows_of


def certificates_reversed(genuine):
    """`genuine` (DER) with the certificates of its set in the reverse order."""
    fields = asn1.read(genuine).expect(asn1.SEQUENCE, 2)[1].children[0].expect(asn1.SEQUENCE, 4)
    body = b"".join(
        asn1.tlv(0xA0, b"".join(c.encoded for c in reversed(field.children))) if field.tag == 0xA0
        else field.encoded for field in fields)
    return asn1.tlv(asn1.SEQUENCE, SIGNED_DATA + asn1.tlv(0xA0, asn1.tlv(asn1.SEQUENCE, body)))


def test_a_receipt_reencoded_around_its_signature_is_answered_without_apple(api, db, receipts, simulator):
    ledger, user_id = Ledger("re-encoded receipt replayed"), new_user_id()
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    receipt = receipts.app_receipt([bought])
    raw = base64.b64decode(receipt)
    copies = [base64.b64encode(encoded).decode() for encoded in (certificate_copies(raw, 2), certificates_reversed(raw))]
    assert len(set(copies + [receipt])) == 3
    simulator.reset_stats()

    assert_verify_answer(ledger.post(api, receipt, user_id=user_id), "delivered")
    (first,) = wait_until(lambda: rows_of(db, receipt), 10, "the receipt's row")
    for copy in copies * 2:  # each copy once through the database look-up, once through the replay cache
        body = assert_verify_answer(ledger.post(api, copy, user_id=user_id), "already_delivered")
        assert [t["state"] for t in body["transactions"]] == ["already_delivered"]
        assert body["transactions"][0]["transaction_id"] == bought["transaction_id"]

    stats = simulator.stats()
    assert (stats["production"]["requests"], stats["sandbox"]["requests"]) == (1, 0), (
        "a re-encoded copy of a receipt Apple found valid went to Apple again")
    assert first["signed_key"] is not None and first["signed_key"] != first["sha256"]
    for copy in copies:
        rows = wait_until(lambda: len(rows_of(db, copy)) == 2 and rows_of(db, copy), 10, "the copy's replay rows")
        assert all(row["replay_of"] == first["receipt_id"] and row["signed_key"] == first["signed_key"]
                   and row["receipt_data"] == copy for row in rows), rows
        assert_every_row_recovers_its_bytes(db, rows)
    assert db.delivered_count([bought["transaction_id"]]) == 1
    ledger.check(db, [bought["transaction_id"]])
