/// The body Apple POSTs to `/v1/notifications/apple`: `{"signedPayload": "<JWS>"}`.
public enum NotificationRequest {
    /// The longest `signedPayload` taken, in characters. Apple's weigh 10 to
    /// 15 KiB (two JWS, each with three certificates, one inside the other's
    /// payload, and a renewal info for subscriptions); nginx refuses bodies over
    /// 64 KiB on this route.
    public static let maxSignedPayloadCharacters = 64 * 1024

    /// The JWS. Errors are the contract's 400s (`invalid_json`, `missing_field`,
    /// `invalid_field`); whether Apple signed it is `SignedDataVerifier`'s part.
    public static func signedPayload(body: [UInt8]) throws(APIError) -> String {
        try RequestBody(body).requiredString(
            "signedPayload", "must be a compact JWS of 1 to \(maxSignedPayloadCharacters) printable ASCII characters"
        ) { text in
            (1...maxSignedPayloadCharacters).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
        }
    }
}
