import IAPCore
import XCTest

final class DeliveryAdmissionTests: XCTestCase {
    private let bundleIDs = ["com.example.game"]

    private func receipt(bundleID: String? = "com.example.game", applicationVersion: String = "1.0") -> AppleReceipt {
        AppleReceipt(
            format: .appReceipt, bundleID: bundleID, applicationVersion: applicationVersion, appItemID: nil,
            inApp: [AppleFixtures.transaction("1")])
    }

    private func admit(
        _ receipt: AppleReceipt, _ environment: AppleEnvironment, policy: SandboxPolicy = .review,
        settingsAreKnown: Bool = true, reviewVersion: String = "", sandboxUsers: [String] = [], appVersion: String? = "1.2.0",
        userID: String = "u-1001"
    ) -> AdmissionResult {
        Admission.admit(
            receipt: receipt, environment: environment, bundleIDs: bundleIDs, policy: policy,
            settingsAreKnown: settingsAreKnown, reviewVersion: reviewVersion, sandboxUsers: sandboxUsers, appVersion: appVersion, userID: userID)
    }

    private func isRejected(_ result: AdmissionResult) -> Bool {
        if case .rejected = result { return true }
        return false
    }

    func testProductionReceiptsAreAdmittedUnderEveryPolicy() {
        for policy in SandboxPolicy.allCases {
            XCTAssertEqual(admit(receipt(), .production, policy: policy), .admitted, policy.rawValue)
        }
    }

    func testTheBundleIDMustMatchExactly() {
        for bundleID in ["com.example.game2", "com.example", "COM.EXAMPLE.GAME", " com.example.game", "com.other.app"] {
            let result = admit(receipt(bundleID: bundleID), .production)
            XCTAssertEqual(result, .rejected(reason: "bundle id \(bundleID) is not configured"), bundleID)
        }
        XCTAssertTrue(isRejected(admit(receipt(bundleID: nil), .production)))
        XCTAssertTrue(isRejected(admit(receipt(bundleID: "com.other.app"), .sandbox, policy: .always)))
    }

    func testAnyConfiguredBundleIDIsAccepted() {
        let result = Admission.admit(
            receipt: receipt(bundleID: "com.example.game2"), environment: .production,
            bundleIDs: ["com.example.game", "com.example.game2"], policy: .never, settingsAreKnown: true,
            reviewVersion: "", sandboxUsers: [], appVersion: nil, userID: "u")
        XCTAssertEqual(result, .admitted)
    }

    func testIOS6ReceiptsAreCheckedByBid() throws {
        let ios6 = try XCTUnwrap(AppleFixtures.reply(SeedAnswers.ios6TransactionReceipt).receipt)
        let result = Admission.admit(
            receipt: ios6, environment: .production, bundleIDs: ["com.netease.sdk.test"], policy: .review,
            settingsAreKnown: true, reviewVersion: "", sandboxUsers: [], appVersion: nil, userID: "u")
        XCTAssertEqual(result, .admitted)
        XCTAssertTrue(isRejected(admit(ios6, .production)))
    }

    func testSandboxPolicyAlwaysAdmits() {
        XCTAssertEqual(admit(receipt(), .sandbox, policy: .always), .admitted)
    }

    func testSandboxPolicyNeverRejectsEvenInReviewAndForSandboxUsers() {
        let result = admit(
            receipt(), .sandbox, policy: .never, reviewVersion: "1.3.0", sandboxUsers: ["u-1001"], appVersion: "1.3.0")
        XCTAssertTrue(isRejected(result))
    }

    func testReviewPolicyAdmitsTheVersionInReview() {
        XCTAssertEqual(admit(receipt(), .sandbox, reviewVersion: "1.3.0", appVersion: "1.3.0"), .admitted)
    }

    func testReviewPolicyRejectsOtherVersions() {
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, reviewVersion: "1.3.0", appVersion: "1.2.0")))
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, reviewVersion: "1.3.0", appVersion: nil)))
    }

    func testAPlaceholderReviewVersionAdmitsNothingEvenWhenSent() {
        // The old procedure left "0.0.0" in the table, and any tester can send it.
        for placeholder in ["0.0.0", "0", "9.9.9", "999", "x", "none", "-"] {
            XCTAssertTrue(isRejected(admit(receipt(), .sandbox, reviewVersion: placeholder, appVersion: placeholder)))
            XCTAssertTrue(isRejected(admit(receipt(), .sandbox, reviewVersion: placeholder, appVersion: "1.3.0")))
        }
    }

    func testSandboxReceiptsWaitWhileTheSettingsAreUnknown() {
        let unknown = admit(
            receipt(), .sandbox, settingsAreKnown: false, reviewVersion: "", sandboxUsers: [], appVersion: "1.3.0")
        XCTAssertEqual(unknown, .settingsUnknown)
    }

    func testUnknownSettingsChangeNothingTheSettingsDoNotDecide() {
        XCTAssertEqual(admit(receipt(), .production, settingsAreKnown: false), .admitted)
        XCTAssertEqual(admit(receipt(), .sandbox, policy: .always, settingsAreKnown: false), .admitted)
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, policy: .never, settingsAreKnown: false)))
        XCTAssertTrue(isRejected(admit(receipt(bundleID: "com.other.app"), .sandbox, settingsAreKnown: false)))
    }

    func testReviewPolicyWithoutReviewVersionRejectsEvenAnEmptyAppVersion() {
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, reviewVersion: "", appVersion: "")))
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, reviewVersion: "", appVersion: nil)))
    }

    func testReviewPolicyIgnoresTheReceiptsOwnApplicationVersion() {
        // A sandbox receipt's application_version is the build number: it must not open the switch.
        let sandboxReceipt = receipt(applicationVersion: "1.3.0")
        XCTAssertTrue(isRejected(admit(sandboxReceipt, .sandbox, reviewVersion: "1.3.0", appVersion: "1.2.0")))
        XCTAssertTrue(isRejected(admit(sandboxReceipt, .sandbox, reviewVersion: "1.3.0", appVersion: nil)))
    }

    func testReviewPolicyAdmitsSandboxUsers() {
        XCTAssertEqual(admit(receipt(), .sandbox, sandboxUsers: ["qa-1", "u-1001"], userID: "u-1001"), .admitted)
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, sandboxUsers: ["qa-1"], userID: "u-1001")))
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, sandboxUsers: ["u-10011"], userID: "u-1001")))
        XCTAssertTrue(isRejected(admit(receipt(), .sandbox, sandboxUsers: [""], userID: "")))
    }
}
