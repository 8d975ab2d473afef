import IAPCore
import MariaDB

/// The audit row of a receipt verify refused after its input checks (docs/tables.md
/// "The purchase ledger": every such request leaves a row): 409
/// `order_user_mismatch`, a request naming another user's order, which is how
/// someone trying receipts against orders shows. The row holds what the
/// request said, the receipt's bytes, and `verified_at` = `received_at`:
/// closed at once, nothing was asked of Apple (`apple_status` NULL), and
/// `iapctl retry-pending` leaves it alone. Written on the accept thread before
/// the answer: a refusal is rare, and one INSERT.
struct RefusedReceiptAudit {
    let connection: MariaDBConnection

    func record(_ receipt: ReceiptStore.NewReceipt) throws(MariaDBError) {
        let request = receipt.request
        try connection.execute(
            """
            INSERT INTO receipts (sha256, receipt_data, order_id, transaction_id, app_version, user_id, client_ip,
              received_at, verified_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(request.receipt.sha256Hex), .asciiBytes(request.receipt.base64), .optional(request.orderID),
                .optional(request.transactionID), .optional(request.appVersion), .text(receipt.userID),
                .optional(receipt.clientAddress.map { String($0.prefix(45)) }), .text(receipt.receivedAt.sql),
                .text(receipt.receivedAt.sql),
            ]
        ).requireRows(1, "INSERT INTO receipts (refused)")
    }
}
