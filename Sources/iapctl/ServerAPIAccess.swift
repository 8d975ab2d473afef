import ArgumentParser
import IAPCore
import IAPService

/// The App Store Server API for one iapctl command, from the same environment as iap-fcgi.
enum ServerAPIAccess {
    /// A query ready to ask, or the operator's error: not configured, a bad variable.
    static func query() throws -> ServerAPIQuery {
        let configuration = try configuration()
        do {
            return try ServerAPIQuery(configuration: configuration, rootCAFile: configuration.appleRootCAFile)
        } catch let error as ServerAPIQuery.NotConfigured {
            throw AdminError(error.description)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    /// iap-fcgi's configuration, from the same environment, or the variable at fault.
    static func configuration() throws -> ServiceConfiguration {
        do {
            return try ServiceConfiguration.fromEnvironment(ProcessEnvironment.variables())
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// What the operator is told when a question got no answer.
    static func failure(_ error: AppStoreServerError, notFound: String) -> AdminError {
        switch error {
        case .notFound:
            return AdminError(notFound)
        case .unauthorized:
            return AdminError(
                "the App Store Server API refused our token (401): check IAP_APPSTORE_KEY_ID, IAP_APPSTORE_ISSUER_ID,"
                    + " IAP_APPSTORE_PRIVATE_KEY_FILE and the first of IAP_BUNDLE_IDS")
        case .unavailable:
            return AdminError("the App Store Server API did not answer in time (IAP_APPLE_TIMEOUT_MS); try again")
        case .invalidAnswer:
            return AdminError("Apple's answer held a signed transaction that does not verify, or was not as documented")
        }
    }
}
