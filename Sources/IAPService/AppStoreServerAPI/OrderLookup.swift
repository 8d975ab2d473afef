import Dispatch
import IAPCore
internal import SignedData

/// `iapctl lookup`: asks Look Up Order ID about one order, from a command-line
/// process, on an `AppleClient` of its own (as `iapctl retry-pending` does),
/// and waits for the verified transactions.
public enum OrderLookup {
    /// Why the lookup could not be made at all.
    public struct NotConfigured: Error, CustomStringConvertible {
        public let description: String
    }

    /// One transaction of the order, as Apple signed it (verified).
    public struct Transaction: Sendable {
        public let transactionID: String
        public let productID: String
        /// Milliseconds since 1970 UTC.
        public let purchaseDate: Int64
    }

    /// The order's transactions, each verified against the roots in
    /// `rootCAFile` (PEM), or Apple Root CA - G3 when it is nil.
    /// - Throws: `NotConfigured` without `IAP_APPSTORE_*` credentials,
    ///   `ConfigurationError` for a bad key or root file, `CurlError` when libcurl cannot start.
    public static func run(
        _ orderID: String, configuration: ServiceConfiguration, rootCAFile: String?
    ) throws -> Result<[Transaction], AppStoreServerError> {
        let roots = try trustedRoots(rootCAFile)
        let apple = try AppleClient(endpoints: AppleEndpoints(configuration))
        guard let client = try AppStoreServerClient(
            configuration: configuration, apple: apple, verifier: SignedDataVerifier(roots: roots))
        else {
            throw NotConfigured(
                description: "the App Store Server API is not configured: set IAP_APPSTORE_KEY_ID,"
                    + " IAP_APPSTORE_ISSUER_ID and IAP_APPSTORE_PRIVATE_KEY_FILE (the In-App Purchase key)")
        }
        apple.start()
        defer { apple.stop() }
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<[SignedTransaction], AppStoreServerError>>(.failure(.unavailable))
        guard client.lookUpOrder(orderID, completion: { outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }) else { return .failure(.unavailable) }
        answered.wait()
        return result.withLock { $0 }.map { transactions in
            transactions.map { Transaction(transactionID: $0.transactionID, productID: $0.productID, purchaseDate: $0.purchaseDate) }
        }
    }

    private static func trustedRoots(_ file: String?) throws(ConfigurationError) -> TrustedRoots {
        guard let file else { return .apple }
        guard let pem = readSmallTextFile(file), let roots = try? TrustedRoots(pem: pem) else {
            throw ConfigurationError(variable: "IAP_APPLE_ROOT_CA_FILE", problem: "\(file) is not a readable PEM of certificates")
        }
        return roots
    }
}
