extension SubscriptionPeriod {
    /// The period `transaction` is, when it is one of an auto-renewable subscription: it carries an
    /// expiry (a JWS's `expiresDate`, a receipt's `expires_date_ms` or `expires_date`). Nil for any other
    /// purchase, and for a period without a purchase date, which could take no place in its chain.
    public init?(transaction: AppleTransaction, environment: String) {
        let raw = transaction.raw
        guard let expires = AppleScalar.int64(raw["expiresDate"]) ?? AppleScalar.int64(raw["expires_date_ms"])
            ?? AppleScalar.text(raw["expires_date"]).flatMap(AppleDate.milliseconds(fromAppleDate:)),
            let purchased = transaction.purchaseDateMs
        else { return nil }
        self.init(
            transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
            productID: transaction.productID, purchaseDate: purchased, expiresDate: expires, environment: environment,
            revocationDate: transaction.isRefunded ? (transaction.cancellationDateMs ?? purchased) : nil)
    }
}
