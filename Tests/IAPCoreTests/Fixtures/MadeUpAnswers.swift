/// Answers of verifyReceipt written for the tests, in Apple's shape (not from a seed).
enum MadeUpAnswers {
    /// A production app receipt: three purchases, one refunded purchase, and a
    /// `latest_receipt_info` that repeats two of them and adds one more. Some
    /// values are JSON numbers, as Apple sends now and then; one entry has no
    /// `_ms` dates, one no `original_transaction_id`, one an unknown field.
    static let threePurchasesOneRefundedWithLatestInfo = #"""
        {"status": 0, "environment": "Production",
         "receipt": {
          "receipt_type": "Production", "bundle_id": "com.example.game",
          "application_version": "1.3.0", "app_item_id": 1234567890,
          "in_app": [
           {"quantity": "1", "product_id": "zydj.product.pay_6",
            "transaction_id": "1000000000000001", "original_transaction_id": "1000000000000001",
            "purchase_date": "2014-07-24 09:11:01 Etc/GMT", "purchase_date_ms": "1406193061000",
            "is_trial_period": "false"},
           {"quantity": 2, "product_id": "zydj.product.pay_40",
            "transaction_id": 1000000000000002,
            "purchase_date": "2014-07-24 09:12:00 Etc/GMT",
            "in_app_ownership_type": "PURCHASED"},
           {"quantity": "1", "product_id": "zydj.product.pay_6",
            "transaction_id": "1000000000000003", "original_transaction_id": "1000000000000003",
            "purchase_date_ms": 1406193200000},
           {"quantity": "1", "product_id": "zydj.product.pay_60",
            "transaction_id": "1000000000000004", "original_transaction_id": "1000000000000004",
            "purchase_date_ms": "1406193300000",
            "cancellation_date": "2014-07-25 10:00:00 Etc/GMT",
            "cancellation_date_ms": "1406282400000", "cancellation_reason": "0"}]},
         "latest_receipt_info": [
           {"quantity": "2", "product_id": "zydj.product.pay_40",
            "transaction_id": "1000000000000002", "original_transaction_id": "1000000000000002",
            "purchase_date_ms": "1406193120000"},
           {"quantity": "1", "product_id": "zydj.product.pay_60",
            "transaction_id": "1000000000000004", "original_transaction_id": "1000000000000004",
            "purchase_date_ms": "1406193300000"},
           {"quantity": "1", "product_id": "zydj.product.pay_6",
            "transaction_id": "1000000000000005", "original_transaction_id": "1000000000000005",
            "purchase_date_ms": "1406193400000"}],
         "latest_receipt": "AAAA"}
        """#

    /// A valid production app receipt of `com.example.game` with one purchase.
    static let productionOnePurchase = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"bundle_id": "com.example.game", "application_version": "1.0",
          "in_app": [{"quantity": "1", "product_id": "zydj.product.pay_6",
            "transaction_id": "1000000117894869", "original_transaction_id": "1000000117894869",
            "purchase_date_ms": "1406193061000"}]}}
        """#

    /// The same receipt answered by the sandbox.
    static let sandboxOnePurchase = #"""
        {"status": 0, "environment": "Sandbox",
         "receipt": {"bundle_id": "com.example.game", "application_version": "1.0",
          "in_app": [{"quantity": "1", "product_id": "zydj.product.pay_6",
            "transaction_id": "1000000117894869", "purchase_date_ms": "1406193061000"}]}}
        """#

    /// An app receipt whose `in_app` is empty: finished consumables leave it.
    static let emptyInApp = #"""
        {"status": 0, "environment": "Production",
         "receipt": {"bundle_id": "com.example.game", "application_version": "1.0", "in_app": []}}
        """#
}
