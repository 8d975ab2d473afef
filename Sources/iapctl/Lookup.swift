import ArgumentParser
import IAPCore
import IAPService
import MariaDB

/// `iapctl lookup APPLE_ORDER_ID [--user U] [--deliver]`: what Apple's Look Up
/// Order ID says about an order id from a customer's receipt email, what this
/// database holds of each of its transactions, whose each one is, and, with
/// `--deliver`, the ones not yet delivered here delivered to U
/// (`LookupDelivery`: the same code as the verify routes, exactly once).
struct Lookup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the transactions of an Apple order id (from the customer's receipt email); deliver them.",
        discussion: """
            Reads the same environment as iap-fcgi (IAP_APPSTORE_*, IAP_BUNDLE_IDS, IAP_CA_FILE, IAP_DB_*, \
            IAP_SANDBOX_POLICY). Prints one tab-separated line per transaction: id, product, purchase date (UTC) and \
            its state here ("not here" when this database has none). Every signed transaction Apple returns is \
            verified before it is shown or delivered.

            --user U adds a column: whether the transaction is U's. "yes": stored for U, or its appAccountToken \
            names an order of U; "no": stored for another user, or its token names another user's order (--deliver \
            would refuse it); "-": not here and bound to no order (--deliver would give it to U). Nothing is written.

            --deliver (requires --user) delivers each transaction not yet delivered here to U, exactly once, \
            through the same code as POST /v1/transactions/verify (bundle id, sandbox policy, appAccountToken, \
            revocation), each with an audit row (receipts, kind jws, client_ip "iapctl"). The state column then \
            shows the state after the run, and a last column what the run did: delivered (to U, now), \
            already_delivered (delivered before: see the --user column for whom), refunded (revoked by Apple: \
            recorded refunded, never delivered), rejected (bundle id or sandbox policy), order_user_mismatch (the \
            token names another user's order: nothing done), retry_later (the database failed: run it again).

            Exits 1 when Apple does not know the order, when the Server API is not configured, refuses our token \
            or does not answer in time, and with --deliver when any transaction ended rejected, \
            order_user_mismatch or retry_later.
            """)

    @Argument(help: "The order id Apple printed on the receipt email, e.g. MK5TTTVWJH.")
    var appleOrderID: String

    @Option(help: "The user (user_id) the transactions should belong to, or go to with --deliver.")
    var user: String?

    @Flag(help: "Deliver the transactions not yet delivered here to --user.")
    var deliver = false

    func validate() throws {
        if deliver && user == nil {
            throw ValidationError("--deliver needs --user: the user the goods go to")
        }
        if let user, !UserID.isValid(user) {
            throw ValidationError("--user must be a user id of 1 to 64 characters without control characters")
        }
    }

    func run() throws {
        let query = try ServerAPIAccess.query()
        let transactions: [ServerAPIQuery.Transaction]
        switch query.lookUpOrder(appleOrderID) {
        case .success(let found):
            transactions = found
        case .failure(let error):
            throw ServerAPIAccess.failure(error, notFound: "Apple does not know the order id \(appleOrderID)")
        }
        let lookups = LookupDelivery(configuration: try ServerAPIAccess.configuration(), connection: try AdminDatabase.connect())
        var failed: [String] = []
        for transaction in transactions {
            var outcome: LookupDelivery.Outcome?
            if deliver, let user {
                outcome = try lookups.deliver(transaction, to: user)
            }
            var columns = [
                transaction.transactionID, transaction.productID, AppleDate.iso8601(ms: transaction.purchaseDate),
                try lookups.stateHere(transaction) ?? "not here",
            ]
            if let user {
                columns.append(try lookups.owner(transaction, userID: user).rawValue)
            }
            if let outcome {
                columns.append(outcome.rawValue)
                if outcome.isFailure { failed.append("\(transaction.transactionID): \(outcome.rawValue)") }
            }
            print(columns.joined(separator: "\t"))
        }
        if !failed.isEmpty {
            throw AdminError("not delivered: " + failed.joined(separator: ", "))
        }
    }
}
