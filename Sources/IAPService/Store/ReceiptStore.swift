import IAPCore
import MariaDB

/// SQL of the `receipts` audit table.
struct ReceiptStore {
    let connection: MariaDBConnection

    /// Step 1 of a verification: the receipt is on record before Apple is called.
    func record(
        _ receipt: ReceiptData, orderID: String?, userID: String, clientAddress: String?, at time: Timestamp
    ) throws(MariaDBError) -> UInt64 {
        try connection.execute(
            """
            INSERT INTO receipts (sha256, receipt_data, order_id, user_id, client_ip, received_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            [.text(receipt.sha256Hex), .text(receipt.base64), .optional(orderID), .text(userID),
             .optional(clientAddress.map { String($0.prefix(45)) }), .text(time.sql)]
        ).insertID
    }

    /// Stores Apple's last answer. `completed` marks the verification as done
    /// (`verified_at`); a receipt left without it is one whose Apple call never
    /// completed, to be verified again.
    func recordAppleAnswer(
        receiptID: UInt64, environment: AppleEnvironment?, appleStatus: Int?, answer: [UInt8]?,
        completed: Bool, at time: Timestamp
    ) throws(MariaDBError) {
        try connection.execute(
            """
            UPDATE receipts SET environment = ?, apple_status = ?, apple_response = ?, verified_at = ?
            WHERE receipt_id = ?
            """,
            [.optional(environment?.rawValue), appleStatus.map { .integer(Int64($0)) } ?? .null,
             .optional(answer.map { String(decoding: $0, as: UTF8.self) }),
             completed ? .text(time.sql) : .null, .integer(Int64(receiptID))])
    }
}
