import ArgumentParser
import IAPCore
import IAPService

/// `iapctl transaction-info TRANSACTION_ID`: what Apple's Get Transaction Info
/// says about one transaction (production, then the sandbox), verified.
struct TransactionInfo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transaction-info",
        abstract: "Show a transaction as the App Store Server API signs it (production, then the sandbox).",
        discussion: "Reads the same environment as iap-fcgi. Prints id, product, purchase date (UTC) and the"
            + " environment that knows it. Exits 1 when neither environment does.")

    @Argument(help: "Apple's transaction id, e.g. 2000000123456789.")
    var transactionID: String

    func run() throws {
        switch try ServerAPIAccess.query().transactionInfo(transactionID) {
        case .success(let transaction):
            print(
                [transaction.transactionID, transaction.productID, AppleDate.iso8601(ms: transaction.purchaseDate),
                 transaction.environment].joined(separator: "\t"))
        case .failure(let error):
            throw ServerAPIAccess.failure(error, notFound: "neither production nor the sandbox knows transaction \(transactionID)")
        }
    }
}
