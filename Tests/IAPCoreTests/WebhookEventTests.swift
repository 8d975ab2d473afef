import XCTest

@testable import IAPCore

final class WebhookEventTests: XCTestCase {
    private let event = WebhookEvent(
        eventID: 42, type: .refundReversed, occurredAtMs: 1_764_000_000_123, environment: "Production",
        transaction: .init(
            transactionID: "1000000123", originalTransactionID: "1000000100", productID: "zydj.product.pay_6",
            quantity: 2, purchaseDateMs: 1_763_990_000_000, state: "delivered"),
        order: .init(
            orderID: "3f2a8c1e-0000-4000-8000-000000000001", userID: "u-\"1\"", productID: "zydj.product.pay_6",
            price: "6.00", currency: "CNY", status: "delivered"))

    func testTheBodyHasTheContractsMembersInItsOrder() {
        let body = String(decoding: event.body(), as: UTF8.self)
        XCTAssertEqual(
            body,
            #"{"event_id":42,"type":"refund_reversed","store":"app_store","occurred_at":"2025-11-24T16:00:00Z","environment":"Production","#
                + #""transaction":{"transaction_id":"1000000123","original_transaction_id":"1000000100","#
                + #""product_id":"zydj.product.pay_6","quantity":2,"purchase_date":"2025-11-24T13:13:20Z","#
                + #""state":"delivered","revocation_reason":null,"revocation_type":null,"revocation_percentage":null,"#
                + #""refunded_quantity":null},"#
                + #""order":{"order_id":"3f2a8c1e-0000-4000-8000-000000000001","#
                + #""user_id":"u-\"1\"","product_id":"zydj.product.pay_6","price":"6.00","currency":"CNY","#
                + #""status":"delivered"}}"#)
    }

    func testAPartialRefundCarriesApplesRevocation() throws {
        var refund = event
        refund.type = .refunded
        refund.transaction.state = "refunded"
        refund.transaction.revocationReason = 0
        refund.transaction.revocationType = "REFUND_PRORATED"
        refund.transaction.revocationPercentage = 40000
        let transaction = try JSONParser.parse(refund.body()).objectValue?["transaction"]?.objectValue
        XCTAssertEqual(transaction?["revocation_reason"], .number("0"))
        XCTAssertEqual(transaction?["revocation_type"], .string("REFUND_PRORATED"))
        XCTAssertEqual(transaction?["revocation_percentage"], .number("40000"))
        XCTAssertNil(try JSONParser.parse(refund.body()).objectValue?["refund_request"])
    }

    func testAGooglePartialRefundSaysItsStoreAndHowManyItTookBack() throws {
        var refund = event
        refund.type = .refunded
        refund.store = .googlePlay
        refund.transaction.transactionID = "GPA.3312-4567-8901-23456"
        refund.transaction.quantity = 5
        refund.transaction.refundedQuantity = 2
        let parsed = try JSONParser.parse(refund.body()).objectValue
        XCTAssertEqual(parsed?["store"], .string("google_play"))
        XCTAssertEqual(parsed?["transaction"]?.objectValue?["quantity"], .number("5"))
        XCTAssertEqual(parsed?["transaction"]?.objectValue?["refunded_quantity"], .number("2"))
        XCTAssertEqual(parsed?["transaction"]?.objectValue?["revocation_percentage"], .null)
        XCTAssertNil(parsed?["subscription"])
    }

    func testASubscriptionChangedEventCarriesTheChainLast() throws {
        var changed = event
        changed.type = .subscriptionChanged
        changed.subscription = .init(
            status: "grace_period", expiresAtMs: 1_764_043_200_123, autoRenew: false,
            originalTransactionID: "1000000100")
        let body = String(decoding: changed.body(), as: UTF8.self)
        XCTAssertTrue(
            body.hasSuffix(#""status":"delivered"},"subscription":{"status":"grace_period","#
                + #""expires_at":"2025-11-25T04:00:00Z","auto_renew":false,"original_transaction_id":"1000000100"}}"#),
            body)
        changed.subscription?.autoRenew = nil
        changed.subscription?.expiresAtMs = nil
        let chain = try JSONParser.parse(changed.body()).objectValue?["subscription"]?.objectValue
        XCTAssertEqual(chain?["auto_renew"], .null)
        XCTAssertEqual(chain?["expires_at"], .null)
        changed.subscription = nil
        XCTAssertEqual(try JSONParser.parse(changed.body()).objectValue?["subscription"], .null)
        XCTAssertNil(try JSONParser.parse(event.body()).objectValue?["subscription"])
    }

    func testARefundRequestedEventCarriesItsRequestLast() throws {
        var asked = event
        asked.type = .refundRequested
        asked.refundRequest = .init(reason: "UNINTENDED_PURCHASE", deadlineAtMs: 1_764_043_200_123)
        let body = String(decoding: asked.body(), as: UTF8.self)
        XCTAssertTrue(
            body.hasSuffix(#""status":"delivered"},"refund_request":{"reason":"UNINTENDED_PURCHASE","#
                + #""deadline_at":"2025-11-25T04:00:00Z"}}"#), body)
        asked.refundRequest = .init(reason: nil, deadlineAtMs: 1_764_043_200_123)
        XCTAssertEqual(
            try JSONParser.parse(asked.body()).objectValue?["refund_request"]?.objectValue?["reason"], .null)
        asked.refundRequest = nil
        XCTAssertEqual(try JSONParser.parse(asked.body()).objectValue?["refund_request"], .null)
    }

    func testMissingRowsAreNull() throws {
        var gone = event
        gone.transaction.purchaseDateMs = nil
        gone.transaction.state = nil
        gone.order.price = nil
        gone.order.currency = nil
        gone.order.status = nil
        let parsed = try JSONParser.parse(gone.body()).objectValue
        XCTAssertEqual(parsed?["transaction"]?.objectValue?["purchase_date"], .null)
        XCTAssertEqual(parsed?["transaction"]?.objectValue?["state"], .null)
        XCTAssertEqual(parsed?["order"]?.objectValue?["price"], .null)
    }

    func testTheSignatureIsTheHexHMACOfTimeDotBody() {
        // Python: hmac.new(b"whsec-test-0123456789", b'1700000000.{"event_id":1}', hashlib.sha256).hexdigest()
        XCTAssertEqual(
            WebhookSignature.header(
                body: Array(#"{"event_id":1}"#.utf8), secret: "whsec-test-0123456789", unixSeconds: 1_700_000_000),
            "t=1700000000,v1=ae629e51e3608ddeb23bb6fb58c4c530c2db23baceb827293da419d3125106fe")
    }

    func testTheHeadersNameTheEventAndCarryTheSignature() {
        let body = event.body()
        let headers = event.headers(body: body, secret: "whsec-test-0123456789", unixSeconds: 1_700_000_001)
        XCTAssertEqual(headers.first, "X-IAP-Event-Id: 42")
        XCTAssertEqual(
            headers.last,
            "X-IAP-Signature: "
                + WebhookSignature.header(body: body, secret: "whsec-test-0123456789", unixSeconds: 1_700_000_001))
        XCTAssertNotEqual(
            WebhookSignature.header(body: body, secret: "whsec-test-0123456789", unixSeconds: 1_700_000_001),
            WebhookSignature.header(body: body, secret: "whsec-test-0123456780", unixSeconds: 1_700_000_001))
    }
}
