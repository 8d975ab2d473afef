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

    func testSeveralLookUpsAreTakenAllOrNone() {
        var budget = TransactionLookupBudget(perMinute: 5)
        XCTAssertTrue(budget.take(3, atMs: 0))
        XCTAssertFalse(budget.take(3, atMs: 1_000), "two left: three are refused whole")
        XCTAssertTrue(budget.take(2, atMs: 2_000), "the refusal took none")
        XCTAssertFalse(budget.take(atMs: 59_999))
        XCTAssertTrue(budget.take(3, atMs: 60_000), "the first three are a minute old")
        XCTAssertFalse(budget.take(atMs: 61_999), "the two of 2 s are not")
        XCTAssertTrue(budget.take(2, atMs: 62_000))
        XCTAssertFalse(budget.take(6, atMs: 1_000_000), "more than a minute's budget never fits")
        XCTAssertTrue(budget.take(5, atMs: 1_000_000))
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

    private func player(_ number: Int, address: String? = nil) -> LookupShares.Requester {
        LookupShares.Requester(user: "u-\(number)", address: address ?? "198.51.100.\(number)")
    }

    func testARememberedIdIsAnsweredWithoutTakingALookUp() {
        var lookups = TransactionIDLookups(perMinute: 2)
        XCTAssertEqual(lookups.admit("1", for: player(1), atMs: 0), .lookUp)
        lookups.learnUnknown("1", atMs: 100)
        XCTAssertTrue(lookups.isKnownUnknown("1", atMs: 150))
        XCTAssertEqual(lookups.admit("1", for: player(2), atMs: 200), .knownUnknown)
        XCTAssertEqual(lookups.admit("1", for: player(3), atMs: 300), .knownUnknown)
        XCTAssertEqual(lookups.admit("2", for: player(4), atMs: 400), .lookUp, "the memory took none of the budget")
        XCTAssertEqual(lookups.admit("3", for: player(5), atMs: 500), .overBudget)
        XCTAssertEqual(
            lookups.admit("1", for: player(6), atMs: 60_100), .lookUp, "forgotten, and the first look-up a minute old")
    }

    func testAReceiptsConfirmationsShareTheBudgetWithBareIds() {
        var lookups = TransactionIDLookups(perMinute: 600)
        XCTAssertTrue(lookups.admitConfirmations(590, atMs: 0))
        XCTAssertFalse(lookups.admitConfirmations(11, atMs: 1), "eleven entries where ten are left: none")
        for number in 0..<10 {
            XCTAssertEqual(lookups.admit("\(number)", for: player(number), atMs: 2), .lookUp)
        }
        XCTAssertEqual(lookups.admit("10", for: player(10), atMs: 3), .overBudget)
        XCTAssertFalse(lookups.admitConfirmations(1, atMs: 59_999))
        XCTAssertTrue(lookups.admitConfirmations(590, atMs: 60_000))
    }

    /// The case: one client posting a dozen made-up ids a second for made-up users once
    /// spent the whole 600 a minute. Those that pass the service's open-order check still get no
    /// more than a user's or an address's share, and everyone else's look-ups go through.
    func testOneUserAndOneAddressGetAShareAndOthersStillGetTheirs() {
        var lookups = TransactionIDLookups(perMinute: 600)
        var taken = 0
        for second in 0..<60 {
            for index in 0..<12 {
                let id = "9\(second * 12 + index)"
                if lookups.admit(id, for: player(1, address: "203.0.113.9"), atMs: Int64(second) * 1000) == .lookUp {
                    taken += 1
                }
            }
        }
        XCTAssertEqual(taken, 60, "one user: a tenth of the minute's budget")
        var fromOneAddress = 0
        for number in 2..<1_000 where lookups.admit(
            "8\(number)", for: player(number, address: "203.0.113.9"), atMs: 59_000) == .lookUp
        {
            fromOneAddress += 1
        }
        XCTAssertEqual(fromOneAddress, 240, "many users behind one address: half of the budget in all")
        XCTAssertEqual(lookups.admit("71", for: player(2_000, address: "192.0.2.7"), atMs: 59_500), .lookUp, "another player still gets one")
        XCTAssertEqual(
            lookups.admit("72", for: player(1, address: "203.0.113.9"), atMs: 60_000), .lookUp,
            "the first user's oldest look-up is a minute old")
    }

    func testAShareIsCountedOverAnyMinute() {
        var shares = LookupShares(perUser: 2, perAddress: 3)
        let first = LookupShares.Requester(user: "a", address: "192.0.2.1")
        XCTAssertTrue(shares.allows(first, atMs: 0))
        shares.record(first, atMs: 0)
        shares.record(first, atMs: 30_000)
        XCTAssertFalse(shares.allows(first, atMs: 59_999), "the user's two are taken")
        let sameAddress = LookupShares.Requester(user: "b", address: "192.0.2.1")
        XCTAssertTrue(shares.allows(sameAddress, atMs: 59_999))
        shares.record(sameAddress, atMs: 59_999)
        XCTAssertFalse(
            shares.allows(LookupShares.Requester(user: "c", address: "192.0.2.1"), atMs: 59_999), "the address's three")
        XCTAssertTrue(shares.allows(LookupShares.Requester(user: "c", address: "192.0.2.2"), atMs: 59_999))
        XCTAssertTrue(shares.allows(first, atMs: 60_000), "the first look-up is a minute old")
        XCTAssertTrue(
            shares.allows(LookupShares.Requester(user: "c", address: nil), atMs: 60_000), "no address: the user's share")
    }

    func testAnIPv6AddressCountsByItsSlash64() {
        XCTAssertEqual(LookupShares.Requester(user: "a", address: "2001:db8:1:2:3:4:5:6").network, "2001:db8:1:2::/64")
        XCTAssertEqual(LookupShares.Requester(user: "a", address: "2001:DB8:1:2::ffff").network, "2001:db8:1:2::/64")
        XCTAssertEqual(LookupShares.Requester(user: "a", address: "::ffff:203.0.113.7").network, "203.0.113.7")
        XCTAssertEqual(LookupShares.Requester(user: "a", address: "unix").network, "unix", "no address: as it came")
        var shares = LookupShares(perUser: 100, perAddress: 2)
        for host in 1...2 {
            shares.record(LookupShares.Requester(user: "u\(host)", address: "2001:db8:1:2::\(host)"), atMs: 0)
        }
        XCTAssertFalse(shares.allows(LookupShares.Requester(user: "u3", address: "2001:db8:1:2::3"), atMs: 1))
        XCTAssertTrue(shares.allows(LookupShares.Requester(user: "u3", address: "2001:db8:1:3::3"), atMs: 1))
    }

    func testTheSharesForgetEveryLookUpAMinuteOld() {
        var shares = LookupShares(perMinute: 600)
        for number in 0..<600 {
            shares.record(LookupShares.Requester(user: "u\(number)", address: "10.0.\(number / 256).\(number % 256)"),
                          atMs: Int64(number))
        }
        XCTAssertEqual(shares.remembered.users, 600)
        XCTAssertTrue(shares.allows(LookupShares.Requester(user: "x", address: nil), atMs: 60_599))
        XCTAssertEqual(shares.remembered.users, 0)
        XCTAssertEqual(shares.remembered.networks, 0)
    }

    // MARK: receipts under server-api

    func testAReceiptIsConfirmedInItsOwnEnvironmentOnlyAndNotAtAllWhenItWouldBeRefused() {
        func plan(_ bundleID: String?, _ environment: AppleEnvironment, _ policy: SandboxPolicy) -> AppleEnvironment? {
            ReceiptConfirmationPlan.environment(
                bundleID: bundleID, receiptEnvironment: environment, bundleIDs: ["com.example.game", "com.example.b"],
                sandboxPolicy: policy)
        }
        XCTAssertEqual(plan("com.example.game", .production, .never), .production)
        XCTAssertEqual(plan("com.example.b", .production, .review), .production)
        XCTAssertEqual(plan("com.example.game", .sandbox, .review), .sandbox, "the delivery applies review")
        XCTAssertEqual(plan("com.example.game", .sandbox, .always), .sandbox)
        XCTAssertNil(plan("com.example.game", .sandbox, .never), "refused by the policy whatever Apple says")
        XCTAssertNil(plan("com.example.other", .production, .always), "another app's receipt")
        XCTAssertNil(plan("com.example.gam", .production, .always), "a bundle id matches exactly")
        XCTAssertNil(plan(nil, .production, .always))
    }
}
