/// One voided purchase as `purchases.voidedpurchases.list` gives it: a
/// one-time product refunded, charged back or revoked, in whole or (a
/// quantity-based partial refund) `voidedQuantity` of it.
public struct GoogleVoidedPurchase: Equatable, Sendable {
    public let purchaseToken: String
    /// Google's order id (`GPA.…`); absent for some promotional and test purchases.
    public let orderID: String?
    /// When Google voided it, in milliseconds since 1970.
    public let voidedTimeMilliseconds: Int64
    /// How many of the purchase's quantity this refund took back; nil: the whole purchase.
    public let voidedQuantity: Int?
    /// `voidedSource`: 0 the user, 1 the developer, 2 Google.
    public let voidedSource: Int?
    /// `voidedReason`: 7 chargeback, 8 not acknowledged within 3 days, ….
    public let voidedReason: Int?

    public init(
        purchaseToken: String, orderID: String?, voidedTimeMilliseconds: Int64, voidedQuantity: Int?,
        voidedSource: Int? = nil, voidedReason: Int? = nil
    ) {
        self.purchaseToken = purchaseToken
        self.orderID = orderID
        self.voidedTimeMilliseconds = voidedTimeMilliseconds
        self.voidedQuantity = voidedQuantity
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
    }

    /// What makes applying it exactly once: the purchase (its token's SHA-256)
    /// and the moment Google voided it. Google lists the same voided purchase
    /// with the same two whenever it is read again; two partial refunds of one
    /// purchase are two moments. Stored as a `google_notifications.message_id`
    /// (at most 92 ASCII characters; Pub/Sub's message ids are digits, so the
    /// `voided:` prefix never meets one).
    public var ledgerKey: String {
        "voided:" + GoogleTransactionID.tokenSHA256(purchaseToken) + ":" + String(voidedTimeMilliseconds)
    }

    public static func parse(_ object: JSONObject, field: String) throws(GoogleReplyError) -> GoogleVoidedPurchase {
        guard let token = object["purchaseToken"]?.stringValue, !token.isEmpty else {
            throw GoogleReplyError(.missingField, field: field + ".purchaseToken")
        }
        // int64 values come as strings in JSON's proto mapping, sometimes as numbers.
        guard let time = object["voidedTimeMillis"]?.scalarText.flatMap({ Int64($0) }), time >= 0 else {
            throw GoogleReplyError(.invalidField, field: field + ".voidedTimeMillis")
        }
        var quantity: Int?
        if let value = object["voidedQuantity"], !value.isNull {
            guard let number = value.scalarText.flatMap({ Int($0) }), number > 0 else {
                throw GoogleReplyError(.invalidField, field: field + ".voidedQuantity")
            }
            quantity = number
        }
        return GoogleVoidedPurchase(
            purchaseToken: token, orderID: object["orderId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 },
            voidedTimeMilliseconds: time, voidedQuantity: quantity,
            voidedSource: object["voidedSource"]?.scalarText.flatMap { Int($0) },
            voidedReason: object["voidedReason"]?.scalarText.flatMap { Int($0) })
    }
}

/// One page of `purchases.voidedpurchases.list`: `voidedPurchases` (left out
/// when none) and `tokenPagination.nextPageToken` when more follow.
public struct GoogleVoidedPurchasePage: Equatable, Sendable {
    public let purchases: [GoogleVoidedPurchase]
    public let nextPageToken: String?

    public init(purchases: [GoogleVoidedPurchase], nextPageToken: String?) {
        self.purchases = purchases
        self.nextPageToken = nextPageToken
    }

    public static func parse(_ body: [UInt8]) throws(GoogleReplyError) -> GoogleVoidedPurchasePage {
        guard let value = try? JSONParser.parse(body), let object = value.objectValue else {
            throw GoogleReplyError.notAnObject
        }
        var purchases: [GoogleVoidedPurchase] = []
        if let list = object["voidedPurchases"], !list.isNull {
            guard let items = list.arrayValue else { throw GoogleReplyError(.invalidField, field: "voidedPurchases") }
            for (index, item) in items.enumerated() {
                let field = "voidedPurchases[\(index)]"
                guard let entry = item.objectValue else { throw GoogleReplyError(.invalidField, field: field) }
                purchases.append(try GoogleVoidedPurchase.parse(entry, field: field))
            }
        }
        let next = object["tokenPagination"]?["nextPageToken"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        return GoogleVoidedPurchasePage(purchases: purchases, nextPageToken: next)
    }
}
