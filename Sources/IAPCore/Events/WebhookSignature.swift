import Crypto

/// The `X-IAP-Signature` header of a webhook POST: `t=<unix seconds>,v1=<hex
/// HMAC-SHA256 of "<t>.<body>" keyed with IAP_WEBHOOK_SECRET>`. The time inside
/// the signed text lets the game refuse an old POST replayed by someone who saw it.
public enum WebhookSignature {
    public static let headerName = "X-IAP-Signature"

    public static func header(body: [UInt8], secret: String, unixSeconds: Int64) -> String {
        let time = String(unixSeconds)
        var authenticator = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        authenticator.update(data: Array("\(time).".utf8))
        authenticator.update(data: body)
        return "t=\(time),v1=\(lowercaseHex(authenticator.finalize()))"
    }
}
