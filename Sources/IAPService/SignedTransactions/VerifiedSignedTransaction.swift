import IAPCore
internal import SignedData

/// A StoreKit 2 transaction whose JWS verified: the JWS as it came (the audit
/// row keeps it as `receipt_data`), the transaction, and its payload's object
/// as Apple signed it (the delivery code keeps it).
struct VerifiedSignedTransaction: Sendable {
    let jws: String
    let transaction: SignedTransaction
    let raw: JSONObject
}

extension SignedDataVerifier {
    /// Verifies a JWS offline (`verify`) and reads its transaction.
    func verifiedTransaction(_ jws: String) throws(SignedDataError) -> VerifiedSignedTransaction {
        let (payload, json) = try verify(Array(jws.utf8))
        return VerifiedSignedTransaction(jws: jws, transaction: try SignedTransaction(payload: payload, json: json), raw: json)
    }
}
