import ArgumentParser
import IAPCore
import IAPService
import MariaDB

extension Google {
    /// `iapctl google lookup TOKEN [--package P]`: what Google Play says of a purchase (productsv2) beside
    /// what this database holds of it, for support. The token is never printed: its SHA-256 is what the
    /// tables, logs and audit rows show in its place.
    struct Lookup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "lookup",
            abstract: "Show what Google Play says of a purchase token and what is stored here.",
            discussion: "Reads the same environment as iap-fcgi (IAP_GOOGLE_PACKAGES, IAP_GOOGLE_SERVICE_ACCOUNT_FILE,"
                + " IAP_GOOGLE_API_URL, IAP_CA_FILE, IAP_DB_*). Asks Google in --package, else in each configured"
                + " package until one knows the token. Prints `name: value` lines: the token's SHA-256, Google's"
                + " purchase, then the transaction, the consume or acknowledge owed, the notifications and the"
                + " verify requests stored here. Writes nothing. Exits 1 when Google cannot be read (what is"
                + " stored is printed first).")

        @Argument(help: "The purchase token (from the app, or a support ticket).")
        var purchaseToken: String

        @Option(help: "The app's package name (one of IAP_GOOGLE_PACKAGES); left out: each in turn.")
        var package: String?

        func validate() throws {
            guard GoogleVerifyRequest.isPurchaseToken(purchaseToken) else {
                throw ValidationError("a purchase token is 1 to 4096 printable ASCII characters")
            }
        }

        func run() throws {
            let query: GooglePlayQuery
            do {
                query = try GooglePlayQuery(configuration: try ServerAPIAccess.configuration())
            } catch let error as GooglePlayQuery.NotConfigured {
                throw AdminError(error.description)
            } catch let error as ConfigurationError {
                throw ValidationError(error.description)
            }
            let packages = package.map { [$0] } ?? query.packages
            if let package, !query.packages.contains(package) {
                throw ValidationError("--package \(package) is not one of IAP_GOOGLE_PACKAGES")
            }
            let tokenSHA256 = GoogleTransactionID.tokenSHA256(purchaseToken)
            print("token_sha256: \(tokenSHA256)")
            var unavailable: String?
            let found: (String, GooglePlayQuery.PurchaseAnswer)? = query.whileRunning {
                for package in packages {
                    let answer = query.readPurchase(packageName: package, purchaseToken: purchaseToken)
                    switch answer {
                    case .purchase: return (package, answer)
                    case .unavailable(let reason): unavailable = reason
                    case .unknownToken: continue
                    }
                }
                return nil
            }
            if let (package, answer) = found, case .purchase(let purchase, let body) = answer {
                for line in GooglePurchaseLines.google(purchase, body: body, package: package) { print(line) }
            } else if let unavailable {
                print("google: not read (\(unavailable))")
            } else {
                print("google: unknown token in \(packages.joined(separator: ", "))")
            }
            for line in try StoredGooglePurchase(connection: try AdminDatabase.connect()).lines(tokenSHA256: tokenSHA256) {
                print(line)
            }
            if found == nil, let unavailable { throw AdminError("Google could not be read: \(unavailable)") }
        }
    }
}

/// What Google says of a purchase, as `name: value` lines.
enum GooglePurchaseLines {
    static func google(_ purchase: GooglePurchase, body: [UInt8], package: String) -> [String] {
        let items = purchase.lineItems.map { "\($0.productID) x\($0.quantity)" }.joined(separator: ", ")
        let consumption = (try? JSONParser.parse(body))?["productLineItem"]?.arrayValue?.first?["productOfferDetails"]?[
            "consumptionState"]?.stringValue
        return [
            "google_package: \(package)",
            "google_state: \(purchase.state.rawValue)",
            "google_order_id: \(purchase.orderID ?? "-")",
            "google_products: \(items)",
            "google_test_purchase: \(purchase.isTestPurchase ? "yes" : "no")",
            "google_account_id: \(purchase.obfuscatedAccountID ?? "-")",
            "google_acknowledged: \(purchase.isAcknowledged ? "yes" : "no")",
            "google_consumption: \(consumption ?? "-")",
            "google_completed: \(purchase.completionTimeMilliseconds.map { AppleDate.iso8601(ms: $0) } ?? "-")",
        ]
    }
}

/// What this database holds of a Google purchase, by its token's SHA-256.
struct StoredGooglePurchase {
    let connection: MariaDBConnection

    func lines(tokenSHA256: String) throws -> [String] {
        var lines: [String] = []
        let transaction = try connection.execute(
            """
            SELECT transaction_id, state, order_id, user_id, product_id, quantity, refunded_quantity, environment,
              delivered_at, finished_at, cancellation_date
            FROM transactions WHERE purchase_token_sha256 = ?
            """,
            [.text(tokenSHA256)]
        ).first
        if let row = transaction {
            let names = [
                "transaction_id", "state", "order_id", "user_id", "product_id", "quantity", "refunded_quantity",
                "environment", "delivered_at", "finished_at", "cancellation_date",
            ]
            lines += zip(names, row).map { "here_\($0): \($1 ?? "-")" }
            if let finish = try connection.execute(
                "SELECT action, attempts, next_attempt_at, deadline_at, last_error FROM google_finishes WHERE transaction_id = ?",
                [.text(row[0] ?? "")]
            ).first {
                lines.append(
                    "here_owed_to_google: \(finish[0] ?? "-"), attempts \(finish[1] ?? "0"), next \(finish[2] ?? "-"),"
                        + " deadline \(finish[3] ?? "-"), last error \(finish[4] ?? "-")")
            } else {
                lines.append("here_owed_to_google: nothing")
            }
        } else {
            lines.append("here_transaction: none")
        }
        for row in try connection.execute(
            """
            SELECT event_time, kind, effect, message_id FROM google_notifications
            WHERE purchase_token_sha256 = ? ORDER BY event_time, received_at
            """,
            [.text(tokenSHA256)]
        ).rows {
            lines.append("here_notification: \(row[0] ?? "-") \(row[1] ?? "-") \(row[2] ?? "-") (message \(row[3] ?? "-"))")
        }
        let requests = try connection.execute(
            "SELECT COUNT(*), MAX(received_at) FROM receipts WHERE sha256 = ? AND kind = 'google'", [.text(tokenSHA256)]
        ).first
        lines.append("here_verify_requests: \(requests?[0] ?? "0") (last \(requests?[1] ?? "-"))")
        return lines
    }
}
