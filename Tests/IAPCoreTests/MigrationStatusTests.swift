import XCTest

@testable import IAPCore

final class MigrationStatusTests: XCTestCase {
    func testUpToDate() {
        let status = MigrationStatus(applied: ["001_a.sql", "002_b.sql"], files: ["002_b.sql", "001_a.sql"])
        XCTAssertEqual(status.pending, [])
        XCTAssertEqual(status.unknown, [])
        XCTAssertEqual(status.summary, "2 applied, 2 in sql/: up to date")
    }

    func testPendingAndUnknownAreNamedInOrder() {
        let status = MigrationStatus(
            applied: ["001_a.sql", "009_newer.sql"], files: ["003_c.sql", "001_a.sql", "002_b.sql"])
        XCTAssertEqual(status.pending, ["002_b.sql", "003_c.sql"])
        XCTAssertEqual(status.unknown, ["009_newer.sql"])
        XCTAssertEqual(
            status.summary,
            "2 applied, 3 in sql/; pending: 002_b.sql, 003_c.sql (run iapctl migrate); applied but not in sql/: 009_newer.sql")
    }
}

final class MigrationStatusUnreadableFolderTests: XCTestCase {
    func testAnUnreadableFolderCallsNoAppliedMigrationUnknown() {
        let status = MigrationStatus(applied: ["001_a.sql", "002_b.sql"], files: nil, directory: "sql")
        XCTAssertEqual(status.unknown, [])
        XCTAssertEqual(status.pending, [])
        XCTAssertEqual(status.summary, "2 applied; cannot read sql to compare (pass --sql-dir)")
    }
}
