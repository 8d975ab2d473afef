import IAPCore
import MariaDB

/// What the console reads of a player, and the player behind each kind of search.
struct ConsolePlayerQueries {
    let connection: MariaDBConnection

    /// The user ids a search finds (the Apple order id is looked up at Apple, not here; a purchase token
    /// by its SHA-256, the column that is unique, never by the token itself).
    func users(_ kind: ConsoleSearch, _ text: String) throws -> [String] {
        let sql: String
        switch kind {
        case .userID:
            sql = """
                SELECT DISTINCT user_id FROM (SELECT user_id FROM orders WHERE user_id = ?
                  UNION SELECT user_id FROM transactions WHERE user_id = ?
                  UNION SELECT user_id FROM receipts WHERE user_id = ?
                  UNION SELECT user_id FROM subscriptions WHERE user_id = ?) found
                """
            return try connection.execute(sql, Array(repeating: .text(text), count: 4)).rows.compactMap { $0[0] }
        case .orderID: sql = "SELECT user_id FROM orders WHERE order_id = ?"
        case .transactionID: sql = "SELECT user_id FROM transactions WHERE transaction_id = ?"
        case .originalTransactionID:
            sql = "SELECT DISTINCT user_id FROM transactions WHERE original_transaction_id = ? ORDER BY user_id"
        case .googleOrderID:
            sql = """
                SELECT DISTINCT user_id FROM (SELECT user_id FROM transactions WHERE transaction_id = ? AND store = 'google_play'
                  UNION SELECT user_id FROM consumption_requests WHERE order_id = ? AND store = 'google_play') found
                WHERE user_id IS NOT NULL ORDER BY user_id
                """
            return try connection.execute(sql, [.asciiBytes(text), .asciiBytes(text)]).rows.compactMap { $0[0] }
        case .purchaseToken:
            sql = "SELECT user_id FROM transactions WHERE purchase_token_sha256 = ?"
            return try connection.execute(sql, [.asciiBytes(GoogleTransactionID.tokenSHA256(text))]).rows.compactMap { $0[0] }
        case .appleOrderID: return []
        }
        return try connection.execute(sql, [.asciiBytes(kind == .orderID ? text.lowercased() : text)]).rows.compactMap { $0[0] }
    }

    /// The player's page: every table, newest first, each row with its plain-language meaning.
    func player(_ userID: String, csrf: String, role: StaffRole) throws -> [String: Any] {
        let user: [SQLValue] = [.text(userID)]
        let transactions = try connection.execute(
            """
            SELECT transaction_id, original_transaction_id, product_id, environment, state, purchase_date, delivered_at,
                   cancellation_date, store, quantity, refunded_quantity, LEFT(purchase_token, \(StoreLabels.tokenPrefixLength))
            FROM transactions WHERE user_id = ? ORDER BY created_at DESC LIMIT 500
            """, user
        ).rows.map { row -> [String: Any] in
            let store = row[8] ?? "app_store", quantity = row[9] ?? "1", refunded = row[10] ?? "0"
            return [
                "transactionID": row[0] ?? "", "originalTransactionID": row[1] ?? "", "productID": row[2] ?? "",
                "environment": row[3] ?? "", "state": row[4] ?? "", "purchaseDate": row[5] ?? "",
                "deliveredAt": row[6] ?? "", "cancellationDate": row[7] ?? "",
                "store": StoreLabels.name(store), "isGoogle": store == "google_play",
                "tokenPrefix": StoreLabels.tokenPrefix(row[11]), "quantity": StoreLabels.quantity(quantity, refunded: refunded),
                "explanation": StateExplanation.transaction(
                    row[4] ?? "", store: store, quantity: Int(quantity) ?? 1, refundedQuantity: Int(refunded) ?? 0),
            ]
        }
        let orders = try connection.execute(
            """
            SELECT order_id, product_id, price, currency, status, origin, created_at
            FROM orders WHERE user_id = ? ORDER BY created_at DESC LIMIT 500
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "orderID": row[0] ?? "", "productID": row[1] ?? "", "price": row[2] ?? "", "currency": row[3] ?? "",
                "status": row[4] ?? "", "origin": row[5] ?? "", "createdAt": row[6] ?? "",
                "explanation": StateExplanation.order(row[4] ?? ""),
            ]
        }
        let canAct = role.may(.redeliverEvent)
        let events = try connection.execute(
            """
            SELECT event_id, type, transaction_id, status, attempts, last_error, created_at, store
            FROM events WHERE user_id = ? ORDER BY event_id DESC LIMIT 500
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "eventID": row[0] ?? "", "type": row[1] ?? "", "transactionID": row[2] ?? "", "status": row[3] ?? "",
                "store": StoreLabels.name(row[7] ?? ""),
                "attempts": row[4] ?? "", "lastError": row[5] ?? "", "createdAt": row[6] ?? "",
                "explanation": StateExplanation.event(row[3] ?? ""),
                "canRedeliver": canAct && row[3] != "pending", "csrf": csrf, "userID": userID,
            ]
        }
        let refundRequests = try connection.execute(
            """
            SELECT request_id, transaction_id, reason, status, requested_at, sent_body, last_error, outcome,
                   deadline_at > UTC_TIMESTAMP(3), store, deadline_at
            FROM consumption_requests WHERE user_id = ? ORDER BY request_id DESC LIMIT 200
            """, user
        ).rows.map { row -> [String: Any] in
            let store = row[9] ?? "app_store"
            return [
                "requestID": row[0] ?? "", "transactionID": row[1] ?? "", "reason": row[2] ?? "", "status": row[3] ?? "",
                "requestedAt": row[4] ?? "", "sentBody": row[5] ?? "", "lastError": row[6] ?? "", "outcome": row[7] ?? "",
                "store": StoreLabels.name(store), "deadlineAt": row[10] ?? "",
                "explanation": StateExplanation.refundRequest(row[3] ?? "", outcome: row[7], store: store),
                "canSend": role.may(.sendRefundAnswer) && (row[3] == "pending" || row[3] == "failed") && row[8] == "1",
                "csrf": csrf, "userID": userID,
            ]
        }
        let notifications = try connection.execute(
            """
            SELECT n.notification_type, n.subtype, n.transaction_id, n.environment, n.signed_date, n.applied, n.effect
            FROM notifications n
            WHERE n.transaction_id IN (SELECT transaction_id FROM transactions WHERE user_id = ?)
            ORDER BY n.signed_date DESC LIMIT 200
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "type": row[0] ?? "", "subtype": row[1] ?? "", "transactionID": row[2] ?? "", "environment": row[3] ?? "",
                "signedDate": row[4] ?? "", "applied": row[5] == "1" ? "yes" : "no", "effect": row[6] ?? "",
            ]
        }
        // A Google notification names a purchase by its token's SHA-256 or by Google's order id (a refund
        // review: only the order id); two indexed look-ups rather than one OR that would scan.
        let googleNotifications = try connection.execute(
            """
            SELECT message_id, kind, order_id, event_time, received_at, effect FROM google_notifications
            WHERE purchase_token_sha256 IN
                (SELECT purchase_token_sha256 FROM transactions WHERE user_id = ? AND purchase_token_sha256 IS NOT NULL)
            UNION
            SELECT message_id, kind, order_id, event_time, received_at, effect FROM google_notifications
            WHERE order_id IN (SELECT transaction_id FROM transactions WHERE user_id = ? AND store = 'google_play')
            ORDER BY event_time DESC LIMIT 200
            """, user + user
        ).rows.map { row -> [String: Any] in
            [
                "messageID": row[0] ?? "", "kind": row[1] ?? "", "orderID": row[2] ?? "", "eventTime": row[3] ?? "",
                "receivedAt": row[4] ?? "", "effect": row[5] ?? "",
            ]
        }
        let subscriptions = try subscriptionChains(userID, csrf: csrf, mayExtend: role.may(.extendSubscription))
        let receipts = try connection.execute(
            """
            SELECT receipt_id, kind, transaction_id, environment, apple_status, received_at, client_ip,
                   verified_at IS NOT NULL, signed_data_error
            FROM receipts WHERE user_id = ? ORDER BY receipt_id DESC LIMIT 200
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "receiptID": row[0] ?? "", "kind": row[1] ?? "", "transactionID": row[2] ?? "", "environment": row[3] ?? "",
                "appleStatus": row[4] ?? "", "receivedAt": row[5] ?? "", "clientIP": row[6] ?? "",
                "explanation": StateExplanation.audit(appleStatus: row[4], verified: row[7] == "1", refusedReason: row[8]),
            ]
        }
        let staffAudit = try connection.execute(
            """
            SELECT created_at, staff_name, action, target, client_ip, result
            FROM staff_audit WHERE user_id = ? ORDER BY audit_id DESC LIMIT 200
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "createdAt": row[0] ?? "", "staffName": row[1] ?? "", "action": row[2] ?? "", "target": row[3] ?? "",
                "clientIP": row[4] ?? "", "result": row[5] ?? "",
            ]
        }
        return [
            "userID": userID, "transactions": transactions, "orders": orders, "events": events,
            "refundRequests": refundRequests, "notifications": notifications, "receipts": receipts,
            "staffAudit": staffAudit, "googleNotifications": googleNotifications, "subscriptions": subscriptions,
        ]
    }

    /// The player's subscription chains, each with whether the `entitlements` view lists it now (the view
    /// decides, so that the page says what the game's own query says), and for an admin the form that extends
    /// an App Store chain at Apple.
    private func subscriptionChains(_ userID: String, csrf: String, mayExtend: Bool) throws -> [[String: Any]] {
        let reasons = SubscriptionExtensionReason.allCases.map { ["code": $0.rawValue, "label": ConsolePages.label($0)] as [String: Any] }
        return try connection.execute(
            """
            SELECT s.original_transaction_id, s.store, s.product_id, s.environment, s.status, s.expires_at,
                   s.grace_period_expires_at, s.auto_renew, s.auto_renew_product_id, s.expiration_intent,
                   s.latest_transaction_id, e.entitled_until
            FROM subscriptions s
            LEFT JOIN entitlements e ON e.original_transaction_id = s.original_transaction_id AND e.user_id = s.user_id
            WHERE s.user_id = ? ORDER BY s.expires_at DESC LIMIT 200
            """, [.text(userID)]
        ).rows.map { row -> [String: Any] in
            let entitledUntil = row[11]
            let autoRenew: String
            switch row[7] {
            case "1": autoRenew = row[8].map { "on (next: \($0))" } ?? "on"
            case "0": autoRenew = "off"
            default: autoRenew = "not known yet"
            }
            return [
                "originalTransactionID": row[0] ?? "", "store": StoreLabels.name(row[1] ?? ""), "productID": row[2] ?? "",
                "environment": row[3] ?? "", "status": row[4] ?? "", "expiresAt": row[5] ?? "",
                "gracePeriodExpiresAt": row[6] ?? "", "autoRenew": autoRenew, "expirationIntent": row[9] ?? "",
                "latestTransactionID": row[10] ?? "",
                "entitled": entitledUntil.map { "yes, until \($0)" } ?? "no",
                "canExtend": mayExtend && row[1] == "app_store", "reasons": reasons, "csrf": csrf, "userID": userID,
                "explanation": StateExplanation.subscription(row[4] ?? "", entitled: entitledUntil != nil),
            ]
        }
    }
}
