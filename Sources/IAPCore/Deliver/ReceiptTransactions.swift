/// docs/api.md "POST /v1/receipts/verify" step 5: every transaction of a valid
/// answer, once each, in the order they are delivered. Never only the first or
/// the last one: a receipt can hold several undelivered purchases (a crash
/// between two of them).
public struct ReceiptTransactions: Equatable, Sendable {
    /// Every `in_app` entry (or the iOS 6 flat receipt), then every entry of
    /// `latest_receipt_info`, deduplicated by `transaction_id`: the first copy
    /// wins, but a transaction any copy shows cancelled counts as refunded. The
    /// named transaction, when present, comes first; the rest keep Apple's order.
    public let transactions: [AppleTransaction]
    /// The request's `transaction_id` (nil or empty: none named).
    public let namedTransactionID: String?

    /// At most this many transactions are handled per request (a limit against
    /// abuse; the named one is always among them). Apple's receipts hold far
    /// fewer: finished consumables leave the receipt.
    public static let maximumCount = 1000

    public init(reply: AppleReply, namedTransactionID: String?) {
        self.init(
            inApp: reply.receipt?.inApp ?? [], latestReceiptInfo: reply.latestReceiptInfo,
            namedTransactionID: namedTransactionID)
    }

    public init(inApp: [AppleTransaction], latestReceiptInfo: [AppleTransaction], namedTransactionID: String?) {
        var unique: [AppleTransaction] = []
        var positions: [String: Int] = [:]
        for transaction in inApp + latestReceiptInfo {
            if let position = positions[transaction.transactionID] {
                unique[position] = unique[position].merging(refundFrom: transaction)
            } else {
                positions[transaction.transactionID] = unique.count
                unique.append(transaction)
            }
        }
        let named = namedTransactionID.flatMap { $0.isEmpty ? nil : $0 }
        if let named, let position = positions[named] {
            unique.insert(unique.remove(at: position), at: 0)
        }
        self.transactions = Array(unique.prefix(Self.maximumCount))
        self.namedTransactionID = named
    }

    /// Whether the named transaction is in the receipt; true when none was named.
    public var namedTransactionPresent: Bool {
        guard let namedTransactionID else { return true }
        return transactions.first?.transactionID == namedTransactionID
    }
}
