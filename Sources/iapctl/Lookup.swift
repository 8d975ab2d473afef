import ArgumentParser
import IAPCore
import IAPService
import MariaDB

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
        let transactions: [ServerAPIQuery.Transaction]
        switch try ServerAPIAccess.query().lookUpOrder(appleOrderID) {
        case .success(let found):
            transactions = found
        case .failure(let error):
            throw ServerAPIAccess.failure(error, notFound: "Apple does not know the order id \(appleOrderID)")
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
