import XCTest

@testable import IAPCore

final class ConsolePolicyTests: XCTestCase {
    func testRolesMayWhatTheirRankAllows() {
        let table: [(StaffRole, StaffAction, Bool)] = [
            (.viewer, .deliverLookup, false), (.viewer, .redeliverEvent, false), (.viewer, .reviewVersion, false),
            (.support, .deliverLookup, true), (.support, .redeliverEvent, true), (.support, .sendRefundAnswer, true),
            (.support, .reviewVersion, false), (.support, .sandboxUsers, false), (.support, .staffAdd, false),
            (.admin, .staffAdd, true), (.admin, .staffDisable, true), (.admin, .deliverLookup, true),
        ]
        for (role, action, allowed) in table {
            XCTAssertEqual(role.may(action), allowed, "\(role) \(action)")
        }
    }

    func testSessionEndsWhenIdleOrOld() {
        let lifetime = SessionLifetime(idleSeconds: 1800, absoluteSeconds: 43_200)
        XCTAssertTrue(lifetime.isValid(ageMs: 0, idleMs: 0))
        XCTAssertTrue(lifetime.isValid(ageMs: 43_199_999, idleMs: 1_799_999))
        XCTAssertFalse(lifetime.isValid(ageMs: 1_000, idleMs: 1_800_000), "idle 30 minutes")
        XCTAssertFalse(lifetime.isValid(ageMs: 43_200_000, idleMs: 0), "12 hours, used a moment ago")
        XCTAssertFalse(lifetime.isValid(ageMs: -1, idleMs: 0), "made in the future")
    }

    func testStaffNames() {
        for name in ["alice", "a.b-c_d", "A1", String(repeating: "x", count: 64)] {
            XCTAssertTrue(StaffName.isValid(name), name)
        }
        for name in ["", "a b", "<script>", "élodie", String(repeating: "x", count: 65), "a\"b"] {
            XCTAssertFalse(StaffName.isValid(name), name)
        }
    }

    func testSearchKindsAcceptWhatTheirColumnsHold() {
        XCTAssertTrue(ConsoleSearch.userID.accepts("player <script>\"'"))
        XCTAssertTrue(ConsoleSearch.orderID.accepts("0f8fad5b-d9cb-469f-a165-70867728950e"))
        XCTAssertFalse(ConsoleSearch.orderID.accepts("0f8fad5b"))
        XCTAssertTrue(ConsoleSearch.transactionID.accepts("2000000123456789"))
        XCTAssertFalse(ConsoleSearch.transactionID.accepts("12 34"))
        XCTAssertTrue(ConsoleSearch.appleOrderID.accepts("MK5TTTVWJH"))
        XCTAssertFalse(ConsoleSearch.appleOrderID.accepts("MK5/../x"))
    }

    func testFormFieldsAndCookies() {
        let form = FormFields("name=al%20ice&password=a+b%26c&name=second&bad=%ZZ&empty=")
        XCTAssertEqual(form["name"], "al ice", "the first of repeated names")
        XCTAssertEqual(form["password"], "a b&c")
        XCTAssertNil(form["bad"])
        XCTAssertEqual(form["empty"], "")
        XCTAssertNil(form.text("empty"))
        XCTAssertEqual(CookieHeader.value(of: "__Host-iap_console", in: "a=1; __Host-iap_console=abc ; b=2"), "abc")
        XCTAssertNil(CookieHeader.value(of: "__Host-iap_console", in: "__Host-iap_console_login=x"))
        XCTAssertNil(CookieHeader.value(of: "__Host-iap_console", in: "iap_console=x"), "only the prefixed name")
        XCTAssertNil(CookieHeader.value(of: "__Host-iap_console", in: nil))
        XCTAssertEqual(FormFields.percentEncoded("a <b>&\"é"), "a%20%3Cb%3E%26%22%C3%A9")
        XCTAssertEqual(FormFields("u=" + FormFields.percentEncoded("x&y=z é"))["u"], "x&y=z é", "round trip")
    }

    func testConstantTimeEquality() {
        XCTAssertTrue(ConstantTime.equal("abc", "abc"))
        XCTAssertFalse(ConstantTime.equal("abc", "abd"))
        XCTAssertFalse(ConstantTime.equal("abc", "ab"))
        XCTAssertFalse(ConstantTime.equal("", "a"))
    }

    func testExplanationsCoverEveryState() {
        for state in ["delivered", "refunded", "unclaimed", "rejected"] {
            XCTAssertFalse(StateExplanation.transaction(state).hasPrefix("State "), state)
        }
        for status in ["pending", "sent", "failed"] {
            XCTAssertFalse(StateExplanation.event(status).hasPrefix("Status "), status)
        }
        XCTAssertTrue(StateExplanation.refundRequest("sent", outcome: "declined").hasSuffix("Apple declined the refund."))
        XCTAssertEqual(StateExplanation.audit(appleStatus: "21003", verified: true, refusedReason: nil),
                       "Apple answered status 21003: not a valid purchase.")
    }
}
