import XCTest

@testable import IAPCore

final class StaffPasswordTests: XCTestCase {
    /// A hash as the service stored it when OpenSSL's `EVP_PBE_scrypt` made them (here made by Python's
    /// `hashlib.scrypt`, which calls that function: password "correct horse", salt bytes 0..15, N = 2^10,
    /// r = 8, p = 1): such a hash must keep verifying.
    private let madeByOpenSSL =
        "scrypt$10$8$1$000102030405060708090a0b0c0d0e0f$9df923deed5f4531c279af9f56bd37b1657bef4929e702ce2e811a93388a86a1"

    func testAHashMadeByOpenSSLStillVerifies() {
        XCTAssertTrue(StaffPassword.verify("correct horse", against: madeByOpenSSL))
        XCTAssertFalse(StaffPassword.verify("correct horsf", against: madeByOpenSSL))
    }

    /// One hash at today's cost (128 MiB, seconds in a debug build): it verifies its password. A wrong
    /// password against the same parameters is the OpenSSL vector's test above.
    func testANewHashIsAtTodaysCostAndVerifiesItsPassword() {
        let stored = StaffPassword.hash("s3cret staff password")
        XCTAssertTrue(stored.hasPrefix("scrypt$17$8$1$"), stored)
        XCTAssertFalse(StaffPassword.isOutdated(stored))
        XCTAssertTrue(StaffPassword.verify("s3cret staff password", against: stored))
    }

    func testAnOlderCostIsOutdatedAndMalformedHashesMatchNothing() {
        XCTAssertTrue(StaffPassword.isOutdated(madeByOpenSSL))
        for stored in ["", "scrypt$10$8$1$00$", "bcrypt$10$8$1$0001$" + String(repeating: "0", count: 64),
                       "scrypt$40" + madeByOpenSSL.dropFirst("scrypt$10".count),
                       String(madeByOpenSSL.dropLast(2))] {
            XCTAssertFalse(StaffPassword.verify("correct horse", against: stored), stored)
        }
    }
}
