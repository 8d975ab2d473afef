import IAPCore
import Synchronization

/// The one access token the whole service shares (`GoogleAccessTokenCache`),
/// and the JWT grant that gets a new one from the key's `token_uri`. Every
/// conversation asks it for the token at the moment its call starts; the
/// token and the key are never logged.
final class GoogleTokenSource: Sendable {
    private let signer: GoogleGrantSigner
    private let cache = Mutex(GoogleAccessTokenCache())

    init(account: GoogleServiceAccount) {
        signer = GoogleGrantSigner(account: account)
    }

    var tokenURI: String { signer.account.tokenURI }

    /// The token a call starting now carries; nil when a new one must be fetched.
    func current() -> String? {
        let now = SystemClock.wallMilliseconds() / 1000
        return cache.withLock { $0.token(at: now) }
    }

    /// The token request's form body, its grant signed now.
    func grantBody() -> [UInt8] {
        Array(signer.tokenRequestBody(issuedAt: SystemClock.wallMilliseconds() / 1000).utf8)
    }

    /// Keeps the token of the token endpoint's 200 answer; false when the answer cannot be read.
    func store(_ body: [UInt8]) -> Bool {
        guard let token = try? GoogleAccessToken.parse(body, receivedAt: SystemClock.wallMilliseconds() / 1000) else {
            Log.event("google: the token endpoint's answer has no usable access token")
            return false
        }
        cache.withLock { $0.store(token) }
        return true
    }

    /// Google answered 401 to a call that carried `token`.
    func refused(_ token: String) {
        cache.withLock { $0.refused(token) }
    }
}
