import IAPCore

/// A subscription's renewal info as Apple signed it (JWSRenewalInfoDecodedPayload,
/// a notification's `signedRenewalInfo`), verified as a transaction is: what the
/// chain takes from it, and Apple's payload byte for byte, to store as it came.
public struct SignedRenewalInfo: Equatable, Sendable {
    public let info: RenewalInfo
    public let payload: [UInt8]

    /// Reads the fields from the payload's JSON object.
    /// - Throws: `SignedDataError.invalidPayload` when a field the chain needs is
    ///   absent, or any named field has the wrong type.
    public init(payload: [UInt8], json: JSONObject) throws(SignedDataError) {
        do {
            self.info = try RenewalInfo(json: json)
        } catch {
            throw SignedDataError.invalidPayload
        }
        self.payload = payload
    }
}

extension SignedDataVerifier {
    /// A subscription's renewal info, verified (the same checks and chain cache as a transaction) and decoded.
    public func verifyRenewalInfo(_ jws: [UInt8]) throws(SignedDataError) -> SignedRenewalInfo {
        let (payload, json) = try verify(jws)
        return try SignedRenewalInfo(payload: payload, json: json)
    }
}
