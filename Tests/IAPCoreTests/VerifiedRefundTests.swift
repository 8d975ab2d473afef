import XCTest

@testable import IAPCore

final class VerifiedRefundTests: XCTestCase {
    private func signed(at signedDate: Int64, revokedAt revocation: Int64 = 50) -> AppleTransaction {
        AppleTransaction(
            transactionID: "1", productID: "pay_6", purchaseDateMs: 10, cancellationDateMs: revocation,
            isRefunded: true, signedDateMs: signedDate)
    }

    private func receiptEntry(cancelledAt cancellation: Int64?) -> AppleTransaction {
        AppleTransaction(transactionID: "1", productID: "pay_6", purchaseDateMs: 10, cancellationDateMs: cancellation, isRefunded: true)
    }

    func testARefundOfATransactionWithNoChangeOnRecordAppliesAndRecordsItsDate() {
        XCTAssertEqual(VerifiedRefund.decide(signed(at: 100), lastChange: nil), .apply(changeDate: 100))
        XCTAssertEqual(VerifiedRefund.decide(receiptEntry(cancelledAt: 60), lastChange: nil), .apply(changeDate: 60))
        XCTAssertEqual(VerifiedRefund.decide(receiptEntry(cancelledAt: nil), lastChange: nil), .apply(changeDate: nil))
    }

    func testAJWSSignedBeforeTheLastChangeIsStale() {
        // Refunded at 50, the JWS signed at 100, reversed by a notification signed at 200.
        XCTAssertEqual(VerifiedRefund.decide(signed(at: 100), lastChange: 200), .stale)
    }

    func testAJWSSignedAtOrAfterTheLastChangeApplies() {
        XCTAssertEqual(VerifiedRefund.decide(signed(at: 300, revokedAt: 250), lastChange: 200), .apply(changeDate: 300))
        XCTAssertEqual(VerifiedRefund.decide(signed(at: 200), lastChange: 200), .apply(changeDate: 200))
    }

    func testAJWSIsOrderedByItsSignedDateNotItsRevocationDate() {
        // Revoked at 50, before the last change (150), but Apple still said so at 300: newer.
        XCTAssertEqual(VerifiedRefund.decide(signed(at: 300, revokedAt: 50), lastChange: 150), .apply(changeDate: 300))
    }

    func testAReceiptIsOrderedByItsCancellationDate() {
        // A reversal applied at 200 is newer than a refund of 60; a refund of 250 came after it.
        XCTAssertEqual(VerifiedRefund.decide(receiptEntry(cancelledAt: 60), lastChange: 200), .stale)
        XCTAssertEqual(VerifiedRefund.decide(receiptEntry(cancelledAt: 250), lastChange: 200), .apply(changeDate: 250))
    }

    func testARefundWithoutAnyDateCannotOverruleADatedChange() {
        XCTAssertEqual(VerifiedRefund.decide(receiptEntry(cancelledAt: nil), lastChange: 200), .stale)
    }

    func testWithoutRefundKeepsEverythingButTheRefund() {
        let plain = signed(at: 100).withoutRefund()
        XCTAssertFalse(plain.isRefunded)
        XCTAssertNil(plain.cancellationDateMs)
        XCTAssertEqual(plain.transactionID, "1")
        XCTAssertEqual(plain.purchaseDateMs, 10)
        XCTAssertEqual(plain.signedDateMs, 100)
    }

    func testMergingARefundKeepsTheSignedDate() {
        let plain = AppleTransaction(transactionID: "1", productID: "pay_6", signedDateMs: 7)
        XCTAssertEqual(plain.merging(refundFrom: receiptEntry(cancelledAt: 60)).signedDateMs, 7)
    }
}
