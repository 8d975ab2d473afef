/// What a receipt's audit row holds of its verification.
public enum ReceiptRowState: Sendable {
    /// Written before Apple is asked: the answer and `verified_at` are to come.
    case bare
    /// A valid receipt checked here, written complete (as a signed
    /// transaction's row): delivery writes nothing to it. A delivery that does
    /// not happen (its transaction failed, its deadline passed, the queue was
    /// full) reopens it for retry-pending, as a receipt Apple checked; only a
    /// crash or a lost database between the two leaves it to the app's retry,
    /// as a signed transaction.
    case checkedHere
    /// Written complete, nothing to deliver or nothing to reopen: a refused
    /// receipt, a verified JWS.
    case complete
}
