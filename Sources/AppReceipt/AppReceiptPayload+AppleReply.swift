import IAPCore

extension AppReceiptPayload {
    /// What verifyReceipt answers for this receipt (status 0), read by the
    /// same parser as Apple's answers: the delivery code gets the same
    /// `AppleReply`, `AppleReceipt` and `AppleTransaction` values whoever
    /// checked the receipt, and `raw` keeps Apple's spelling (strings for
    /// numbers, `..._date` and `..._date_ms` pairs).
    func appleReply(environment: AppleEnvironment) throws(AppReceiptError) -> AppleReply {
        var receipt: JSONObject = [
            "receipt_type": .optionalString(environmentName),
            "bundle_id": .string(bundleID),
        ]
        if let appItemID { receipt.members.append((key: "app_item_id", value: .int(appItemID))) }
        if let applicationVersion { receipt.members.append((key: "application_version", value: .string(applicationVersion))) }
        receipt.members += Self.date("receipt_creation_date", creationDateMs)
        if let originalApplicationVersion {
            receipt.members.append((key: "original_application_version", value: .string(originalApplicationVersion)))
        }
        receipt.members.append((key: "in_app", value: .array(purchases.map { .object($0.appleObject) })))
        let reply: JSONObject = ["status": .int(0), "environment": .string(environment.rawValue), "receipt": .object(receipt)]
        do {
            return try AppleReply.parse(.object(reply))
        } catch {
            throw AppReceiptError.invalidPayload
        }
    }

    /// `NAME` in Apple's `2014-07-24 09:11:01 Etc/GMT` form and `NAME_ms`.
    static func date(_ name: String, _ ms: Int64?) -> [(key: String, value: JSONValue)] {
        guard let ms else { return [] }
        let iso = AppleDate.iso8601(ms: ms)  // 2014-07-24T09:11:01Z
        let gmt = String(iso.dropLast().map { $0 == "T" ? " " : $0 }) + " Etc/GMT"
        return [(key: name, value: .string(gmt)), (key: name + "_ms", value: .string(String(ms)))]
    }
}

extension AppReceiptPurchase {
    /// An `in_app` entry as verifyReceipt writes it.
    var appleObject: JSONObject {
        var object: JSONObject = [
            "quantity": .string(String(quantity)),
            "product_id": .string(productID),
            "transaction_id": .string(transactionID),
            "original_transaction_id": .string(originalTransactionID ?? transactionID),
        ]
        object.members += AppReceiptPayload.date("purchase_date", purchaseDateMs)
        object.members += AppReceiptPayload.date("expires_date", expiresDateMs)
        if let webOrderLineItemID, webOrderLineItemID != 0 {
            object.members.append((key: "web_order_line_item_id", value: .string(String(webOrderLineItemID))))
        }
        object.members += AppReceiptPayload.date("cancellation_date", cancellationDateMs)
        return object
    }
}
