import IAPCore
import MariaDB

/// What the console reads of a player, and the player behind each kind of search.
struct ConsolePlayerQueries {
    let connection: MariaDBConnection

    /// The user ids a search finds (the Apple order id is looked up at Apple, not here).
    func users(_ kind: ConsoleSearch, _ text: String) throws -> [String] {
        let sql: String
        switch kind {
        case .userID:
            sql = """
                SELECT DISTINCT user_id FROM (SELECT user_id FROM orders WHERE user_id = ?
                  UNION SELECT user_id FROM transactions WHERE user_id = ?
                  UNION SELECT user_id FROM receipts WHERE user_id = ?) found
                """
            return try connection.execute(sql, [.text(text), .text(text), .text(text)]).rows.compactMap { $0[0] }
        case .orderID: sql = "SELECT user_id FROM orders WHERE order_id = ?"
        case .transactionID: sql = "SELECT user_id FROM transactions WHERE transaction_id = ?"
        case .originalTransactionID:
            sql = "SELECT DISTINCT user_id FROM transactions WHERE original_transaction_id = ? ORDER BY user_id"
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
                   cancellation_date
            FROM transactions WHERE user_id = ? ORDER BY created_at DESC LIMIT 500
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "transactionID": row[0] ?? "", "originalTransactionID": row[1] ?? "", "productID": row[2] ?? "",
                "environment": row[3] ?? "", "state": row[4] ?? "", "purchaseDate": row[5] ?? "",
                "deliveredAt": row[6] ?? "", "cancellationDate": row[7] ?? "",
                "explanation": StateExplanation.transaction(row[4] ?? ""),
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
            SELECT event_id, type, transaction_id, status, attempts, last_error, created_at
            FROM events WHERE user_id = ? ORDER BY event_id DESC LIMIT 500
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "eventID": row[0] ?? "", "type": row[1] ?? "", "transactionID": row[2] ?? "", "status": row[3] ?? "",
                "attempts": row[4] ?? "", "lastError": row[5] ?? "", "createdAt": row[6] ?? "",
                "explanation": StateExplanation.event(row[3] ?? ""),
                "canRedeliver": canAct && row[3] != "pending", "csrf": csrf, "userID": userID,
            ]
        }
        let refundRequests = try connection.execute(
            """
            SELECT request_id, transaction_id, reason, status, requested_at, sent_body, last_error, outcome,
                   deadline_at > UTC_TIMESTAMP(3)
            FROM consumption_requests WHERE user_id = ? ORDER BY request_id DESC LIMIT 200
            """, user
        ).rows.map { row -> [String: Any] in
            [
                "requestID": row[0] ?? "", "transactionID": row[1] ?? "", "reason": row[2] ?? "", "status": row[3] ?? "",
                "requestedAt": row[4] ?? "", "sentBody": row[5] ?? "", "lastError": row[6] ?? "", "outcome": row[7] ?? "",
                "explanation": StateExplanation.refundRequest(row[3] ?? "", outcome: row[7]),
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
            "staffAudit": staffAudit,
        ]
    }
}
