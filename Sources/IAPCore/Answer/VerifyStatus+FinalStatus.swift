extension VerifyStatus {
    /// The status of a valid, admitted receipt once each transaction has its state.
    ///
    /// Precedence:
    /// 1. A `transaction_id` was named and is not in the receipt: `pending`, even
    ///    when this request delivered others, because the app must not finish a
    ///    transaction whose goods are not recorded.
    /// 2. Any transaction `delivered` now: `delivered`.
    /// 3. Any `already_delivered`: `already_delivered`.
    /// 4. Any `rejected`: `rejected`.
    /// 5. Otherwise (only refunded ones, or an empty `in_app`): `not_paid`.
    public static func finalStatus(
        states: [TransactionState], namedTransactionID: String?, namedTransactionPresent: Bool
    ) -> VerifyStatus {
        if let namedTransactionID, !namedTransactionID.isEmpty, !namedTransactionPresent {
            return .pending
        }
        if states.contains(.delivered) { return .delivered }
        if states.contains(.alreadyDelivered) { return .alreadyDelivered }
        if states.contains(.rejected) { return .rejected }
        return .notPaid
    }
}
