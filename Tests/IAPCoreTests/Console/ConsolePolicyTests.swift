import XCTest

@testable import IAPCore

final class ConsolePolicyTests: XCTestCase {
    func testRolesMayWhatTheirRankAllows() {
        let table: [(StaffRole, StaffAction, Bool)] = [
            (.viewer, .deliverLookup, false), (.viewer, .redeliverEvent, false), (.viewer, .reviewVersion, false),
            (.support, .deliverLookup, true), (.support, .redeliverEvent, true), (.support, .sendRefundAnswer, true),
            (.support, .reviewVersion, false), (.support, .sandboxUsers, false), (.support, .staffAdd, false),
            (.admin, .staffAdd, true), (.admin, .staffDisable, true), (.admin, .deliverLookup, true),
            (.support, .extendSubscription, false), (.admin, .extendSubscription, true),
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
        XCTAssertTrue(ConsoleSearch.transactionID.accepts("GPA.3312-4416-0925-51234"), "Google's ids are transaction ids here")
        XCTAssertTrue(ConsoleSearch.transactionID.accepts("GP-0123456789abcdef0123456789abcdef"))
        XCTAssertTrue(ConsoleSearch.googleOrderID.accepts("GPA.3312-4416-0925-51234"))
        XCTAssertTrue(ConsoleSearch.googleOrderID.accepts("GPA.3312-4416-0925-51234..2"), "a renewal's")
        for text in ["GPA.", "gpa.3312", "3312-4416", "GPA.33 12", "GPA.12<b>", "GPA." + String(repeating: "1", count: 61)] {
            XCTAssertFalse(ConsoleSearch.googleOrderID.accepts(text), text)
        }
        XCTAssertTrue(ConsoleSearch.purchaseToken.accepts("opaque-token.AO-J1Oz_x"))
        XCTAssertFalse(ConsoleSearch.purchaseToken.accepts("with space"))
        XCTAssertFalse(ConsoleSearch.purchaseToken.accepts(String(repeating: "t", count: 4097)))
        XCTAssertEqual(ConsoleSearch.allCases.filter(\.isSecret), [.purchaseToken], "only the token stays out of addresses")
    }

    func testStoreLabelsShowATokensPrefixAndARefundedQuantity() {
        XCTAssertEqual(StoreLabels.name("google_play"), "Google Play")
        XCTAssertEqual(StoreLabels.name("app_store"), "App Store")
        XCTAssertEqual(StoreLabels.tokenPrefix("abcdefghijklmnop"), "abcdefgh…")
        XCTAssertEqual(StoreLabels.tokenPrefix(nil), "")
        XCTAssertEqual(StoreLabels.quantity("3", refunded: "1"), "3 (1 refunded)")
        XCTAssertEqual(StoreLabels.quantity("3", refunded: "0"), "3")
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
        XCTAssertEqual(
            StateExplanation.refundRequest("expired", outcome: "refunded", store: "google_play"),
            "No answer of ours was accepted in time: Google's 24 hours passed, or Google decided first. Google refunded the purchase.")
        XCTAssertTrue(StateExplanation.transaction("refunded", store: "google_play").hasPrefix("Refunded by Google:"))
        XCTAssertTrue(
            StateExplanation.transaction("delivered", store: "google_play", quantity: 3, refundedQuantity: 2)
                .contains("refunded 2 of 3"))
        for status in ["active", "grace_period", "billing_retry", "expired", "revoked"] {
            XCTAssertFalse(StateExplanation.subscription(status, entitled: false).hasPrefix("Status "), status)
        }
        XCTAssertNotEqual(
            StateExplanation.subscription("active", entitled: true), StateExplanation.subscription("active", entitled: false),
            "an active chain past its expiry is explained as not entitled")
        XCTAssertEqual(StateExplanation.audit(appleStatus: "21003", verified: true, refusedReason: nil),
                       "Apple answered status 21003: not a valid purchase.")
    }
}
