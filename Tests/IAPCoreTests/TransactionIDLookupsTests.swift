import XCTest

@testable import IAPCore

final class TransactionIDLookupsTests: XCTestCase {
    // MARK: the minute's budget

    func testTheBudgetAllowsPerMinuteLookUpsInAnySixtySeconds() {
        var budget = TransactionLookupBudget(perMinute: 3)
        XCTAssertTrue(budget.take(atMs: 0))
        XCTAssertTrue(budget.take(atMs: 10_000))
        XCTAssertTrue(budget.take(atMs: 20_000))
        XCTAssertFalse(budget.take(atMs: 59_999), "a fourth within a minute of the first")
        XCTAssertTrue(budget.take(atMs: 60_000), "the first is a minute old")
        XCTAssertFalse(budget.take(atMs: 60_001), "the second is not")
        XCTAssertTrue(budget.take(atMs: 70_000))
        XCTAssertTrue(budget.take(atMs: 80_000))
        XCTAssertFalse(budget.take(atMs: 119_999))
    }

    func testARefusedLookUpDoesNotUseTheBudget() {
        var budget = TransactionLookupBudget(perMinute: 1)
        XCTAssertTrue(budget.take(atMs: 0))
        for at in stride(from: Int64(1_000), to: 60_000, by: 1_000) {
            XCTAssertFalse(budget.take(atMs: at))
        }
        XCTAssertTrue(budget.take(atMs: 60_000), "refusals did not push the window on")
    }

    func testABurstIsCutAtTheBudget() {
        var budget = TransactionLookupBudget(perMinute: 600)
        let allowed = (0..<1_000).filter { _ in budget.take(atMs: 5) }.count
        XCTAssertEqual(allowed, 600)
    }

    // MARK: ids Apple does not know

    func testAnUnknownIdIsRememberedForSixtySeconds() {
        var unknown = UnknownTransactionIDs(capacity: 10)
        XCTAssertFalse(unknown.isUnknown("2000000000000001", atMs: 0))
        unknown.learnUnknown("2000000000000001", atMs: 1_000)
        XCTAssertTrue(unknown.isUnknown("2000000000000001", atMs: 1_000))
        XCTAssertTrue(unknown.isUnknown("2000000000000001", atMs: 60_999))
        XCTAssertFalse(unknown.isUnknown("2000000000000002", atMs: 2_000))
        XCTAssertFalse(unknown.isUnknown("2000000000000001", atMs: 61_000), "forgotten after 60 s")
        XCTAssertEqual(unknown.count, 0)
    }

    func testAnIdLearnedAgainIsRememberedFromTheLaterTime() {
        var unknown = UnknownTransactionIDs(capacity: 10)
        unknown.learnUnknown("7", atMs: 0)
        unknown.learnUnknown("7", atMs: 30_000)
        XCTAssertTrue(unknown.isUnknown("7", atMs: 60_000), "the earlier entry's expiry does not forget it")
        XCTAssertFalse(unknown.isUnknown("7", atMs: 90_000))
    }

    func testTheMemoryIsBoundedOldestFirst() {
        var unknown = UnknownTransactionIDs(capacity: 3)
        for (index, id) in ["1", "2", "3", "4"].enumerated() {
            unknown.learnUnknown(id, atMs: Int64(index))
        }
        XCTAssertEqual(unknown.count, 3)
        XCTAssertFalse(unknown.isUnknown("1", atMs: 10), "the oldest made room")
        XCTAssertTrue(unknown.isUnknown("4", atMs: 10))
        for index in 0..<10_000 {
            unknown.learnUnknown("x\(index)", atMs: 100 + Int64(index))
        }
        XCTAssertEqual(unknown.count, 3)
    }

    // MARK: the two together

    func testARememberedIdIsAnsweredWithoutTakingALookUp() {
        var lookups = TransactionIDLookups(perMinute: 2)
        XCTAssertEqual(lookups.admit("1", atMs: 0), .lookUp)
        lookups.learnUnknown("1", atMs: 100)
        XCTAssertEqual(lookups.admit("1", atMs: 200), .knownUnknown)
        XCTAssertEqual(lookups.admit("1", atMs: 300), .knownUnknown)
        XCTAssertEqual(lookups.admit("2", atMs: 400), .lookUp, "the memory took none of the budget")
        XCTAssertEqual(lookups.admit("3", atMs: 500), .overBudget)
        XCTAssertEqual(lookups.admit("1", atMs: 60_100), .lookUp, "forgotten, and the first look-up a minute old")
    }
}
