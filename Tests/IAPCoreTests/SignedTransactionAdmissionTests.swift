import XCTest

@testable import IAPCore

final class SignedTransactionAdmissionTests: XCTestCase {
    private func admit(
        _ environment: String, bundleID: String = "com.example.game", policy: SandboxPolicy = .review,
        settingsAreKnown: Bool = true, reviewVersion: String = "", sandboxUsers: [String] = [],
        appVersion: String? = nil, userID: String = "u-1"
    ) -> AdmissionResult {
        SignedTransactionAdmission.admit(
            bundleID: bundleID, environment: environment, bundleIDs: ["com.example.game"], policy: policy,
            settingsAreKnown: settingsAreKnown, reviewVersion: reviewVersion, sandboxUsers: sandboxUsers,
            appVersion: appVersion, userID: userID)
    }

    private func isRejected(_ result: AdmissionResult) -> Bool {
        if case .rejected = result { return true }
        return false
    }

    func testProductionOfOurBundleIsAdmittedUnderEveryPolicy() {
        for policy in SandboxPolicy.allCases {
            XCTAssertEqual(admit("Production", policy: policy), .admitted)
        }
    }

    func testAnotherBundleIsRejected() {
        XCTAssertTrue(isRejected(admit("Production", bundleID: "com.example.other")))
        XCTAssertTrue(isRejected(admit("Xcode", bundleID: "com.example.other", policy: .always)))
    }

    func testXcodeAndLocalTestingOnlyUnderAlways() {
        for environment in ["Xcode", "LocalTesting"] {
            XCTAssertEqual(admit(environment, policy: .always), .admitted, environment)
            XCTAssertTrue(isRejected(admit(environment, policy: .never)), environment)
            // Not even in review or for a sandbox user: StoreKit testing involves no payment and no Apple review.
            XCTAssertTrue(
                isRejected(admit(environment, reviewVersion: "1.3.0", sandboxUsers: ["u-1"], appVersion: "1.3.0")),
                environment)
        }
    }

    func testSandboxGoesThroughTheSandboxPolicy() {
        XCTAssertTrue(isRejected(admit("Sandbox")))
        XCTAssertEqual(admit("Sandbox", reviewVersion: "1.3.0", appVersion: "1.3.0"), .admitted)
        XCTAssertEqual(admit("Sandbox", sandboxUsers: ["u-1"]), .admitted)
        XCTAssertEqual(admit("Sandbox", settingsAreKnown: false), .settingsUnknown)
        XCTAssertEqual(admit("Sandbox", policy: .always), .admitted)
        XCTAssertTrue(isRejected(admit("Sandbox", policy: .never, sandboxUsers: ["u-1"])))
    }

    func testAnUnknownEnvironmentIsRejected() {
        XCTAssertTrue(isRejected(admit("Staging", policy: .always)))
        XCTAssertTrue(isRejected(admit("production", policy: .always)))
    }

    func testTestEnvironmentsAreStoredAsSandbox() {
        XCTAssertEqual(SignedTransactionAdmission.Environment.production.deliveryEnvironment, .production)
        for environment in [SignedTransactionAdmission.Environment.sandbox, .xcode, .localTesting] {
            XCTAssertEqual(environment.deliveryEnvironment, .sandbox)
        }
    }
}
