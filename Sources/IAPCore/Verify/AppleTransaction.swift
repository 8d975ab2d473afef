/// One purchase as Apple describes it: an entry of `receipt.in_app` or of
/// `latest_receipt_info`, or an iOS 6 flat `receipt` itself.
///
/// Apple writes every value as a string (`"quantity": "1"`), sometimes as a
/// number; both are read. Fields this type does not name stay in `raw`.
public struct AppleTransaction: Equatable, Sendable {
    public let transactionID: String
    /// `original_transaction_id`, or the transaction's own id when Apple gives none.
    public let originalTransactionID: String
    public let productID: String
    /// `quantity`, 1 when absent.
    public let quantity: Int
    /// `purchase_date_ms`, else `purchase_date` read as a UTC date; nil when neither reads.
    public let purchaseDateMs: Int64?
    /// `cancellation_date_ms`, else `cancellation_date`; nil when absent or unreadable.
    public let cancellationDateMs: Int64?
    /// Apple cancelled (refunded) it: a `cancellation_date` or `cancellation_date_ms`
    /// is present, readable or not. A refunded transaction is never delivered.
    public let isRefunded: Bool
    /// When Apple signed this description of it, in ms: a signed transaction's
    /// `signedDate`; nil for a receipt's entry (verifyReceipt signs nothing).
    /// A refund it shows takes its place by this date (`VerifiedRefund`).
    public let signedDateMs: Int64?
    /// The object as Apple sent it.
    public let raw: JSONObject

    public init(
        transactionID: String, originalTransactionID: String? = nil, productID: String,
        quantity: Int = 1, purchaseDateMs: Int64? = nil, cancellationDateMs: Int64? = nil,
        isRefunded: Bool? = nil, signedDateMs: Int64? = nil, raw: JSONObject = JSONObject()
    ) {
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.productID = productID
        self.quantity = quantity
        self.purchaseDateMs = purchaseDateMs
        self.cancellationDateMs = cancellationDateMs
        self.isRefunded = isRefunded ?? (cancellationDateMs != nil)
        self.signedDateMs = signedDateMs
        self.raw = raw
    }

    /// Reads one transaction object. Without `transaction_id` or `product_id`, or
    /// with an unreadable `quantity`, the answer is broken: an error, not a guess.
    public static func parse(_ object: JSONObject) throws(AppleReplyError) -> AppleTransaction {
        guard let transactionID = AppleScalar.text(object["transaction_id"]) else {
            throw AppleReplyError(.missingField, field: "transaction_id")
        }
        guard let productID = AppleScalar.text(object["product_id"]) else {
            throw AppleReplyError(.missingField, field: "product_id")
        }
        var quantity = 1
        if let value = object["quantity"], !value.isNull {
            guard let read = AppleScalar.int(value), read >= 0 else {
                throw AppleReplyError(.invalidField, field: "quantity")
            }
            quantity = read
        }
        return AppleTransaction(
            transactionID: transactionID,
            originalTransactionID: AppleScalar.text(object["original_transaction_id"]),
            productID: productID,
            quantity: quantity,
            purchaseDateMs: date(in: object, named: "purchase_date"),
            cancellationDateMs: date(in: object, named: "cancellation_date"),
            isRefunded: AppleScalar.text(object["cancellation_date"]) != nil
                || AppleScalar.text(object["cancellation_date_ms"]) != nil,
            raw: object)
    }

    /// The same transaction, refunded when `other` (another copy of it, e.g.
    /// from `latest_receipt_info`) says it was.
    public func merging(refundFrom other: AppleTransaction) -> AppleTransaction {
        guard !isRefunded, other.isRefunded else { return self }
        return AppleTransaction(
            transactionID: transactionID, originalTransactionID: originalTransactionID,
            productID: productID, quantity: quantity, purchaseDateMs: purchaseDateMs,
            cancellationDateMs: other.cancellationDateMs, isRefunded: true, signedDateMs: signedDateMs, raw: raw)
    }

    /// The same transaction without its refund: how a verify handles one whose
    /// revocation is older than the last refund-state change applied to it
    /// (`VerifiedRefund.stale`), so that the state stored stands.
    public func withoutRefund() -> AppleTransaction {
        AppleTransaction(
            transactionID: transactionID, originalTransactionID: originalTransactionID,
            productID: productID, quantity: quantity, purchaseDateMs: purchaseDateMs,
            cancellationDateMs: nil, isRefunded: false, signedDateMs: signedDateMs, raw: raw)
    }

    /// Reads an array of transaction objects; errors name the entry, e.g. `receipt.in_app[2].product_id`.
    static func parseList(_ entries: [JSONValue], at path: String) throws(AppleReplyError) -> [AppleTransaction] {
        var transactions: [AppleTransaction] = []
        transactions.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let place = "\(path)[\(index)]"
            guard let object = entry.objectValue else {
                throw AppleReplyError(.invalidField, field: place)
            }
            do throws(AppleReplyError) {
                transactions.append(try AppleTransaction.parse(object))
            } catch {
                throw error.nested(in: place)
            }
        }
        return transactions
    }

    /// `NAME_ms`, else `NAME` in Apple's `"2014-07-24 09:11:01 Etc/GMT"` form.
    private static func date(in object: JSONObject, named name: String) -> Int64? {
        AppleScalar.int64(object[name + "_ms"])
            ?? AppleScalar.text(object[name]).flatMap(AppleDate.milliseconds(fromAppleDate:))
    }
}
