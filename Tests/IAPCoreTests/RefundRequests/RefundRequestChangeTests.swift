import XCTest

@testable import IAPCore

final class RefundRequestChangeTests: XCTestCase {
    private func request(
        _ status: RefundRequestStatus, id: UInt64 = 7, at requestedAtMs: Int64 = 1000, decidedAt outcomeAtMs: Int64? = nil
    ) -> StoredRefundRequest {
        StoredRefundRequest(requestID: id, status: status, requestedAtMs: requestedAtMs, outcomeAtMs: outcomeAtMs)
    }

    func testTheTable() {
        let cases: [(type: String, signedDate: Int64, latest: StoredRefundRequest?, expected: RefundRequestChange, line: UInt)] = [
            // Apple asks: a new request, or the one not yet sent asked again.
            ("CONSUMPTION_REQUEST", 1000, nil, .open, #line),
            ("CONSUMPTION_REQUEST", 2000, request(.pending), .reopen(requestID: 7), #line),
            ("CONSUMPTION_REQUEST", 2000, request(.noConsent), .reopen(requestID: 7), #line),
            ("CONSUMPTION_REQUEST", 2000, request(.expired), .reopen(requestID: 7), #line),
            ("CONSUMPTION_REQUEST", 2000, request(.failed), .reopen(requestID: 7), #line),
            ("CONSUMPTION_REQUEST", 1000, request(.pending), .reopen(requestID: 7), #line),
            // Answered: a later ask is a new request; an older one was answered with it.
            ("CONSUMPTION_REQUEST", 2000, request(.sent), .open, #line),
            ("CONSUMPTION_REQUEST", 999, request(.sent), .none, #line),
            ("CONSUMPTION_REQUEST", 999, request(.pending), .none, #line),
            // Decided by Apple: never reused; an ask signed after the decision is a new request.
            ("CONSUMPTION_REQUEST", 5000, request(.expired, decidedAt: 4000), .open, #line),
            ("CONSUMPTION_REQUEST", 4000, request(.pending, decidedAt: 4000), .open, #line),
            ("CONSUMPTION_REQUEST", 3999, request(.pending, decidedAt: 4000), .none, #line),
            // Apple decides on the latest request, whatever its status.
            ("REFUND", 3000, request(.sent), .close(requestID: 7, .refunded), #line),
            ("REVOKE", 3000, request(.pending), .close(requestID: 7, .refunded), #line),
            ("REFUND_DECLINED", 3000, request(.noConsent), .close(requestID: 7, .declined), #line),
            ("REFUND", 1000, request(.expired), .close(requestID: 7, .refunded), #line),
            // No request, or a decision older than the request: nothing to close.
            ("REFUND", 3000, nil, .none, #line),
            ("REFUND_DECLINED", 3000, nil, .none, #line),
            ("REFUND", 999, request(.sent), .none, #line),
            // Decisions flip in the order of their signedDate: an older one does not override a newer.
            ("REFUND", 5000, request(.sent, decidedAt: 4000), .close(requestID: 7, .refunded), #line),
            ("REFUND", 4000, request(.sent, decidedAt: 4000), .close(requestID: 7, .refunded), #line),
            ("REFUND_DECLINED", 3999, request(.sent, decidedAt: 4000), .none, #line),
            // Types the ledger does not follow.
            ("REFUND_REVERSED", 3000, request(.sent), .none, #line),
            ("ONE_TIME_CHARGE", 3000, nil, .none, #line),
            ("TEST", 3000, nil, .none, #line),
        ]
        for row in cases {
            XCTAssertEqual(
                RefundRequestChange.decide(notificationType: row.type, signedDate: row.signedDate, latest: row.latest),
                row.expected, row.type, line: row.line)
        }
    }

    func testConcernsOnlyTheTypesItChanges() {
        for type in ["CONSUMPTION_REQUEST", "REFUND", "REVOKE", "REFUND_DECLINED"] {
            XCTAssertTrue(RefundRequestChange.concerns(notificationType: type), type)
        }
        for type in ["ONE_TIME_CHARGE", "REFUND_REVERSED", "TEST", "DID_RENEW", "consumption_request"] {
            XCTAssertFalse(RefundRequestChange.concerns(notificationType: type), type)
        }
    }

    func testTheDeadlineIsTwelveHoursAfterApplesSignedDate() {
        XCTAssertEqual(RefundRequestChange.deadline(requestedAtMs: 1_764_000_000_123), 1_764_043_200_123)
    }

    func testStatusesAndOutcomesAreTheColumnsValues() {
        XCTAssertEqual(
            RefundRequestStatus.allCases.map(\.rawValue), ["pending", "sent", "no_consent", "expired", "failed"])
        XCTAssertEqual(RefundRequestOutcome.allCases.map(\.rawValue), ["refunded", "declined"])
    }

    func testApplesTextIsKeptOnlyWhenItFitsItsASCIIColumn() {
        let cases: [(String?, String?)] = [
            ("UNINTENDED_PURCHASE", "UNINTENDED_PURCHASE"),
            ("Auto-Renewable Subscription", "Auto-Renewable Subscription"),
            (String(repeating: "X", count: 32), String(repeating: "X", count: 32)),
            (String(repeating: "X", count: 33), nil),
            ("", nil),
            (nil, nil),
            ("RÉFUND", nil),
            ("TAB\tINSIDE", nil),
        ]
        for (value, expected) in cases {
            XCTAssertEqual(RefundRequestText.column(value), expected, value ?? "nil")
        }
    }
}
