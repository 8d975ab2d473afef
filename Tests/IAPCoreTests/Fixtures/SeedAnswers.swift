/// Real answers of verifyReceipt quoted by the seed blog posts, which print
/// them as NSDictionary descriptions. Converted back to the JSON Apple sent:
/// `status` a number, every other value a string (docs/apple.md
/// "verifyReceipt"), keys and values unchanged.
enum SeedAnswers {
    /// seeds/000_5ae93e5acde5d4e5.txt, first log: an iOS 6 transaction receipt.
    static let ios6TransactionReceipt = #"""
        {"receipt": {
          "bid": "com.netease.sdk.test", "bvrs": "1.0", "item_id": "892617314",
          "original_purchase_date": "2014-07-24 07:43:14 Etc/GMT",
          "original_purchase_date_ms": "1406187794660",
          "original_purchase_date_pst": "2014-07-24 00:43:14 America/Los_Angeles",
          "original_transaction_id": "1000000117879059",
          "product_id": "com.netease.sdk.test.item2",
          "purchase_date": "2014-07-24 07:43:14 Etc/GMT",
          "purchase_date_ms": "1406187794660",
          "purchase_date_pst": "2014-07-24 00:43:14 America/Los_Angeles",
          "quantity": "1", "transaction_id": "1000000117879059",
          "unique_identifier": "0000b0196818",
          "unique_vendor_identifier": "FEF4F2DB-D07D-4B96-8F22-592A4B9CBAE7"},
         "status": 0}
        """#

    /// seeds/000_5ae93e5acde5d4e5.txt, second log: an iOS 7 app receipt from the
    /// sandbox with one `in_app` entry.
    static let ios7AppReceiptOnePurchase = #"""
        {"environment": "Sandbox",
         "receipt": {
          "adam_id": "0", "application_version": "1.0", "bundle_id": "com.netease.sdk.test",
          "download_id": "0",
          "in_app": [{
            "is_trial_period": "false",
            "original_purchase_date": "2014-07-24 09:11:00 Etc/GMT",
            "original_purchase_date_ms": "1406193060000",
            "original_purchase_date_pst": "2014-07-24 02:11:00 America/Los_Angeles",
            "original_transaction_id": "1000000117894869",
            "product_id": "com.netease.sdk.test.item2",
            "purchase_date": "2014-07-24 09:11:01 Etc/GMT",
            "purchase_date_ms": "1406193061000",
            "purchase_date_pst": "2014-07-24 02:11:01 America/Los_Angeles",
            "quantity": "1", "transaction_id": "1000000117894869"}],
          "original_application_version": "1.0",
          "original_purchase_date": "2013-08-01 07:00:00 Etc/GMT",
          "original_purchase_date_ms": "1375340400000",
          "original_purchase_date_pst": "2013-08-01 00:00:00 America/Los_Angeles",
          "receipt_type": "ProductionSandbox",
          "request_date": "2014-07-24 09:11:17 Etc/GMT",
          "request_date_ms": "1406193077021",
          "request_date_pst": "2014-07-24 02:11:17 America/Los_Angeles"},
         "status": 0}
        """#

    /// seeds/000_5ae93e5acde5d4e5.txt, third log: an app receipt holding two
    /// undelivered purchases (the app did not post the first one in time).
    static let ios7AppReceiptTwoPurchases = #"""
        {"environment": "Sandbox",
         "receipt": {
          "adam_id": "0", "application_version": "1.0", "bundle_id": "com.netease.sdk.test",
          "download_id": "0",
          "in_app": [{
            "is_trial_period": "false",
            "original_purchase_date": "2014-06-23 06:59:55 Etc/GMT",
            "original_purchase_date_ms": "1403506795000",
            "original_purchase_date_pst": "2014-06-22 23:59:55 America/Los_Angeles",
            "original_transaction_id": "1000000114795007",
            "product_id": "com.netease.sdk.test.item1",
            "purchase_date": "2014-06-24 09:06:09 Etc/GMT",
            "purchase_date_ms": "1403600769000",
            "purchase_date_pst": "2014-06-24 02:06:09 America/Los_Angeles",
            "quantity": "1", "transaction_id": "1000000114795007"},
           {
            "is_trial_period": "false",
            "original_purchase_date": "2014-06-24 09:06:09 Etc/GMT",
            "original_purchase_date_ms": "1403600769000",
            "original_purchase_date_pst": "2014-06-24 02:06:09 America/Los_Angeles",
            "original_transaction_id": "1000000114938703",
            "product_id": "com.netease.sdk.test.item3",
            "purchase_date": "2014-06-24 09:06:09 Etc/GMT",
            "purchase_date_ms": "1403600769000",
            "purchase_date_pst": "2014-06-24 02:06:09 America/Los_Angeles",
            "quantity": "1", "transaction_id": "1000000114938703"}],
          "original_application_version": "1.0",
          "original_purchase_date": "2013-08-01 07:00:00 Etc/GMT",
          "original_purchase_date_ms": "1375340400000",
          "original_purchase_date_pst": "2013-08-01 00:00:00 America/Los_Angeles",
          "receipt_type": "ProductionSandbox",
          "request_date": "2014-07-24 08:06:54 Etc/GMT",
          "request_date_ms": "1406189214105",
          "request_date_pst": "2014-07-24 01:06:54 America/Los_Angeles"},
         "status": 0}
        """#

    /// seeds/004_e74c68b0b4c578aa.txt, "iOS 7 style": an app receipt with
    /// `app_item_id` (the post elides the other `in_app` entries with "...").
    static let ios7AppReceiptWithAppItemID = #"""
        {"environment": "Sandbox",
         "receipt": {
          "adam_id": "0", "app_item_id": "0", "application_version": "1.0",
          "bundle_id": "com.dianzhong.kuaikan", "download_id": "0",
          "in_app": [{
            "is_trial_period": "false",
            "original_purchase_date": "2016-09-18 07:55:33 Etc/GMT",
            "original_purchase_date_ms": "1474185333000",
            "original_purchase_date_pst": "2016-09-18 00:55:33 America/Los_Angeles",
            "original_transaction_id": "1000000236789335",
            "product_id": "com.dianzhong.kuaikan6",
            "purchase_date": "2016-09-18 07:55:33 Etc/GMT",
            "purchase_date_ms": "1474185333000",
            "purchase_date_pst": "2016-09-18 00:55:33 America/Los_Angeles",
            "quantity": "1", "transaction_id": "1000000236789335"}],
          "original_application_version": "1.0",
          "original_purchase_date": "2013-08-01 07:00:00 Etc/GMT",
          "original_purchase_date_ms": "1375340400000",
          "original_purchase_date_pst": "2013-08-01 00:00:00 America/Los_Angeles",
          "receipt_creation_date": "2017-04-05 08:53:06 Etc/GMT",
          "receipt_creation_date_ms": "1491382386000",
          "receipt_creation_date_pst": "2017-04-05 01:53:06 America/Los_Angeles",
          "receipt_type": "ProductionSandbox",
          "request_date": "2017-04-05 08:54:44 Etc/GMT",
          "request_date_ms": "1491382484980",
          "request_date_pst": "2017-04-05 01:54:44 America/Los_Angeles",
          "version_external_identifier": "0"},
         "status": 0}
        """#

    /// seeds/004_e74c68b0b4c578aa.txt, "iOS 6 style".
    static let ios6TransactionReceiptWithItemID = #"""
        {"receipt": {
          "bid": "com.dianzhong.kuaikan", "bvrs": "1.0", "item_id": "1140823223",
          "original_purchase_date": "2017-04-01 08:48:59 Etc/GMT",
          "original_purchase_date_ms": "1491036539000",
          "original_purchase_date_pst": "2017-04-01 01:48:59 America/Los_Angeles",
          "original_transaction_id": "1000000286821320",
          "product_id": "com.dianzhong.kuaikan12",
          "purchase_date": "2017-04-01 08:48:59 Etc/GMT",
          "purchase_date_ms": "1491036539000",
          "purchase_date_pst": "2017-04-01 01:48:59 America/Los_Angeles",
          "quantity": "1", "transaction_id": "1000000286821320",
          "unique_identifier": "367c781771909890ea8d59b25db3daf05ef0fbcb",
          "unique_vendor_identifier": "7F144627-A82D-4D71-AACD-C3BAF2ED6684"},
         "status": 0}
        """#

    /// seeds/002_fa075108b0af297d.txt and 003_e884c489302586ba.txt: what
    /// production answers for a sandbox receipt ("21007 收据信息是沙盒测试中使用").
    static let sandboxReceiptSentToProduction = #"{"status": 21007}"#
}
