import IAPCore

extension SignedTransaction {
    /// The transaction as the delivery code consumes it, the same type a
    /// receipt's `in_app` entry becomes: a StoreKit 2 transaction and a receipt
    /// of the same purchase name the same `transactionId`, so either delivers
    /// it once in the same `transactions` table. `revocationDate` stands for
    /// `cancellation_date`: a revoked transaction is refunded, never delivered;
    /// `signedDate` orders that refund among the transaction's refund-state changes.
    /// - Parameter raw: the verified payload's object, kept as Apple signed it.
    public func appleTransaction(raw: JSONObject) -> AppleTransaction {
        AppleTransaction(
            transactionID: transactionID, originalTransactionID: originalTransactionID, productID: productID,
            quantity: quantity, purchaseDateMs: purchaseDate, cancellationDateMs: revocationDate,
            isRefunded: revocationDate != nil, signedDateMs: signedDate, raw: raw)
    }
}
