import ArgumentParser
import IAPCore
import IAPService

/// `iapctl lookup APPLE_ORDER_ID`: what Apple's Look Up Order ID says about
/// an order id from a customer's receipt email, and what this database holds
/// of each of its transactions.
struct Lookup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the transactions of an Apple order id (from the customer's receipt email).",
        discussion: "Reads the same environment as iap-fcgi (IAP_APPSTORE_*, IAP_BUNDLE_IDS, IAP_CA_FILE, IAP_DB_*)."
            + " Prints one line per transaction: id, product, purchase date (UTC) and its state here"
            + " (\"not here\" when this database has none). Exits 1 when Apple does not know the order.")

    @Argument(help: "The order id Apple printed on the receipt email, e.g. MK5TTTVWJH.")
    var appleOrderID: String

    func run() throws {
        let environment = ProcessEnvironment.variables()
        let configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration.fromEnvironment(environment)
        } catch {
            throw ValidationError(error.description)
        }
        let result: Result<[OrderLookup.Transaction], AppStoreServerError>
        do {
            // IAP_APPLE_ROOT_CA_FILE: the roots Apple's signed transactions must chain to (default Apple Root CA - G3).
            result = try OrderLookup.run(
                appleOrderID, configuration: configuration,
                rootCAFile: environment["IAP_APPLE_ROOT_CA_FILE"].flatMap { $0.isEmpty ? nil : $0 })
        } catch let error as OrderLookup.NotConfigured {
            throw AdminError(error.description)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        let transactions: [OrderLookup.Transaction]
        switch result {
        case .success(let found):
            transactions = found
        case .failure(.notFound):
            throw AdminError("Apple does not know the order id \(appleOrderID)")
        case .failure(.unauthorized):
            throw AdminError(
                "the App Store Server API refused our token (401): check IAP_APPSTORE_KEY_ID, IAP_APPSTORE_ISSUER_ID,"
                    + " IAP_APPSTORE_PRIVATE_KEY_FILE and the first of IAP_BUNDLE_IDS")
        case .failure(.unavailable):
            throw AdminError("the App Store Server API did not answer in time (IAP_APPLE_TIMEOUT_MS); try again")
        case .failure(.invalidAnswer):
            throw AdminError("Apple's answer held a signed transaction that does not verify")
        }
        let connection = try AdminDatabase.connect()
        for transaction in transactions {
            let state = try connection.execute(
                "SELECT state FROM transactions WHERE transaction_id = ?", [.text(transaction.transactionID)]
            ).first?[0] ?? nil
            print(
                [transaction.transactionID, transaction.productID, AppleDate.iso8601(ms: transaction.purchaseDate),
                 state ?? "not here"].joined(separator: "\t"))
        }
    }

}
