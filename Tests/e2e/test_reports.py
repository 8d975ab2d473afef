"""The DBA report views of migration 011, against sales made for a product of the test's own (so that
the figures are exact whatever else the run sold): revenue by day with a partial refund subtracted,
refunds by day and reason, sandbox deliveries by user, receipts waiting for retry-pending."""
import importlib
import os
import uuid
from decimal import Decimal
from pathlib import Path

from support import assert_verify_answer, new_transaction_id, new_user_id
from test_retry_pending import unverified_receipt

CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"
REVIEW_VERSION = "7.7.1"


def test_report_views_add_up_the_sales_refunds_sandbox_and_waiting_receipts(
        api, db, receipts, simulator, iapctl, service_settings):
    signer = importlib.import_module("signed_data")
    product = f"report.{uuid.uuid4().hex[:12]}"
    iapctl("products", "add", product, "--price", "12.50", "--currency", "USD")
    user_id = new_user_id()
    tids = [new_transaction_id() for _ in range(3)]
    for tid in tids:
        receipt = receipts.app_receipt([receipts.purchase(product, transaction_id=tid)])
        assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    # Apple refunds half of the first one; a JWS of it tells the service. The refunds view has no
    # product: what the test adds to that day's row is compared (a reused database has earlier runs' refunds).
    refunds_before = refunds_on_the_refund_day(db)
    refund = signer.transaction(product, transaction_id=tids[0], revocation_ms=1_790_000_000_000)
    refund.update(revocationPercentage=50000, revocationType="REFUND_PRORATED", revocationReason=1)
    answer = api.post_json("/v1/transactions/verify", {"signed_transaction": signer.sign(refund, str(CERTS)),
                                                        "user_id": user_id})
    assert answer.json()["transactions"][0]["state"] == "refunded", answer.text
    # A sandbox purchase honoured during App Review.
    service_settings.apply(review_version=REVIEW_VERSION)
    tester = new_user_id()
    sandbox = signer.sign(signer.transaction(product, environment="Sandbox"), str(CERTS))
    assert_verify_answer(api.post_json("/v1/transactions/verify", {
        "signed_transaction": sandbox, "user_id": tester, "app_version": REVIEW_VERSION}), "delivered")
    waiting_user = new_user_id()
    unverified_receipt(api, receipts, simulator, waiting_user)

    [revenue] = db.query("SELECT * FROM report_daily_revenue WHERE product_id = %s", product)
    assert (revenue["currency"], revenue["deliveries"], revenue["refunds"]) == ("USD", 3, 1), revenue
    assert (revenue["gross"], revenue["refunded"], revenue["net"]) == (
        Decimal("37.50"), Decimal("6.25"), Decimal("31.25")), revenue

    refunds = refunds_on_the_refund_day(db)
    assert tuple(a - b for a, b in zip(refunds, refunds_before)) == (1, 1, Decimal("6.25")), (refunds, refunds_before)

    [watched] = db.query("SELECT * FROM report_sandbox_deliveries WHERE user_id = %s", tester)
    assert (watched["deliveries"], watched["products"]) == (1, 1), watched
    assert db.query("SELECT * FROM report_sandbox_deliveries WHERE user_id = %s", user_id) == []

    # The receipt is made 90.5 minutes old: the view's age must be the whole minutes since then, to the minute
    # (the same statement reads the seconds since, against the same UTC_TIMESTAMP()), so at least 90.
    db.execute("UPDATE receipts SET received_at = UTC_TIMESTAMP() - INTERVAL 5430 SECOND WHERE user_id = %s",
               waiting_user)
    [waiting] = db.query("SELECT v.*, TIMESTAMPDIFF(SECOND, v.received_at, UTC_TIMESTAMP()) AS age_seconds"
                         " FROM report_retry_pending v WHERE v.user_id = %s", waiting_user)
    assert waiting["last_apple_status"] == 21005, waiting
    assert waiting["age_seconds"] >= 5430 and waiting["age_minutes"] == waiting["age_seconds"] // 60, waiting


def refunds_on_the_refund_day(db):
    """(refunds, delivered_refunds, refunded) of the test's refund day, reason and environment; zeros for no row."""
    rows = db.query("SELECT * FROM report_daily_refunds WHERE day = '2026-09-21' AND environment = 'Production'"
                    " AND revocation_reason = 1")
    assert len(rows) <= 1, rows
    return tuple((rows[0][column] if rows else 0) for column in ("refunds", "delivered_refunds", "refunded"))
