import Glibc
import IAPCore

/// What reading a purchase with productsv2 brought.
enum GooglePurchaseRead: Sendable {
    /// Google's answer, read, and its body for the audit row.
    case purchase(GooglePurchase, body: [UInt8])
    /// 404 or 410: Google does not know the token; it proves nothing.
    case unknownToken
    /// Google unreachable, refusing our key, or answering what cannot be read: the client asks again later.
    case unavailable(String)
}

/// Consume or acknowledge: what a delivered purchase owes Google.
enum GoogleFinishAction: String, Sendable {
    case consume
    case acknowledge
}

/// The Play Developer API, on `AppleClient`'s thread (`GoogleExchange`): reads a
/// purchase (productsv2), consumes or acknowledges one. TLS is verified against
/// `IAP_CA_FILE` (or the system's CAs). Completions run on the client's thread and must not block.
final class GooglePlayClient: Sendable {
    let configuration: GooglePlayConfiguration
    private let driver: AppleClient
    private let tokens: GoogleTokenSource
    private let caFile: String?
    private let policy: AppleRetryPolicy

    /// The service account of `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`, nil when Google Play is not
    /// configured. Read at start-up, before anything listens.
    /// - Throws: `ConfigurationError` naming the variable when the file cannot be read or is not a
    ///   service account key (its contents are never shown).
    static func account(_ configuration: GooglePlayConfiguration) throws(ConfigurationError) -> GoogleServiceAccount? {
        guard configuration.isConfigured, let path = configuration.serviceAccountFile else { return nil }
        let variable = "IAP_GOOGLE_SERVICE_ACCOUNT_FILE"
        guard let text = readSmallTextFile(path) else {
            throw ConfigurationError(variable: variable, problem: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        do {
            return try GoogleServiceAccount.parse(Array(text.utf8))
        } catch {
            throw ConfigurationError(variable: variable, problem: "\(path): \(error)")
        }
    }

    init(configuration: GooglePlayConfiguration, account: GoogleServiceAccount, caFile: String?, driver: AppleClient) {
        self.configuration = configuration
        self.driver = driver
        self.tokens = GoogleTokenSource(account: account)
        self.caFile = caFile
        self.policy = AppleRetryPolicy(budgetMs: configuration.timeoutMs)
    }

    /// `GET …/purchases/productsv2/tokens/{token}`. False when too many calls wait their turn
    /// (`completion` never runs).
    func readPurchase(
        packageName: String, purchaseToken: String, completion: @escaping @Sendable (GooglePurchaseRead) -> Void
    ) -> Bool {
        let url = applicationURL(packageName) + "/purchases/productsv2/tokens/" + Self.pathSegment(purchaseToken)
        return call(url, body: nil) { verdict in
            switch verdict {
            case .answered(200, let body):
                do {
                    completion(.purchase(try GooglePurchase.parse(body), body: body))
                } catch {
                    completion(.unavailable("\(error)"))
                }
            case .answered(let status, _):
                completion(.unavailable("Google answered \(status)"))
            case .notFound:
                completion(.unknownToken)
            case .unauthorized:
                completion(.unavailable("Google refused the service account (401 or invalid_grant)"))
            case .unavailable:
                completion(.unavailable("Google unavailable"))
            }
        }
    }

    /// `POST …/purchases/products/{productId}/tokens/{token}:consume` (or `:acknowledge`): one
    /// conversation, whose verdict `completion` gets. False as for `readPurchase`.
    func finish(
        _ action: GoogleFinishAction, packageName: String, productID: String, purchaseToken: String,
        completion: @escaping GoogleExchange.Completion
    ) -> Bool {
        let url = applicationURL(packageName) + "/purchases/products/" + Self.pathSegment(productID) + "/tokens/"
            + Self.pathSegment(purchaseToken) + ":" + action.rawValue
        return call(url, body: Array("{}".utf8), completion: completion)
    }

    /// `POST …/orders/{orderId}:reviewrefund` with `body` (`GoogleRefundReviewRequest`): one
    /// conversation, whose verdict `completion` gets. False as for `readPurchase`.
    func reviewRefund(
        packageName: String, orderID: String, body: [UInt8], completion: @escaping GoogleExchange.Completion
    ) -> Bool {
        let url = applicationURL(packageName) + "/orders/" + Self.pathSegment(orderID) + ":reviewrefund"
        return call(url, body: body, completion: completion)
    }

    /// `GET …/purchases/voidedpurchases`: one page of the one-time products (`type` 0) voided from
    /// `startTimeMs` until now, quantity-based partial refunds included; `pageToken` nil for the first.
    /// False as for `readPurchase`.
    func listVoidedPurchases(
        packageName: String, startTimeMs: Int64, pageToken: String?,
        completion: @escaping @Sendable (Result<GoogleVoidedPurchasePage, GoogleUnavailable>) -> Void
    ) -> Bool {
        var url = applicationURL(packageName) + "/purchases/voidedpurchases?type=0"
            + "&includeQuantityBasedPartialRefund=true&maxResults=1000&startTime=" + String(startTimeMs)
        if let pageToken { url += "&token=" + Self.pathSegment(pageToken) }
        return call(url, body: nil) { verdict in
            switch verdict {
            case .answered(200, let body):
                do {
                    completion(.success(try GoogleVoidedPurchasePage.parse(body)))
                } catch {
                    completion(.failure(GoogleUnavailable("\(error)")))
                }
            case .answered(let status, _):
                completion(.failure(GoogleUnavailable("Google answered \(status)")))
            case .notFound:
                completion(.failure(GoogleUnavailable("Google answered 404 (is the package name right?)")))
            case .unauthorized:
                completion(.failure(GoogleUnavailable("Google refused the service account (401 or invalid_grant)")))
            case .unavailable:
                completion(.failure(GoogleUnavailable("Google unavailable")))
            }
        }
    }

    private func call(_ url: String, body: [UInt8]?, completion: @escaping GoogleExchange.Completion) -> Bool {
        let deadline = Deadline(startNs: SystemClock.monotonicNanoseconds(), budgetMs: configuration.timeoutMs * 2)
        let sequence = GoogleCallSequence(policy: policy, hasToken: { [tokens] in tokens.current() != nil })
        let exchange = GoogleExchange(url: url, body: body, tokens: tokens, caFile: caFile, completion: completion)
        return driver.submit(CallConversation(sequence, exchange: exchange, deadline: deadline))
    }

    private func applicationURL(_ packageName: String) -> String {
        configuration.baseURL + "/androidpublisher/v3/applications/" + Self.pathSegment(packageName)
    }

    /// `text` as one URL path segment: RFC 3986's unreserved characters as they are, the rest escaped.
    static func pathSegment(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + lowercaseHex([byte]).uppercased()
            }
        }
        return escaped
    }
}
