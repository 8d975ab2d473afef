import IAPCore
import XCTest

final class DatabaseFailureAnswerTests: XCTestCase {
    private func answer(_ errorNumber: UInt32, serverUnavailable: Bool = false) -> String {
        DatabaseFailureAnswer.apiError(errorNumber: errorNumber, serverUnavailable: serverUnavailable).code
    }

    func testABusyOrUnreachableDatabaseIsRetried() {
        // Too many connections, lock wait timeout, deadlock, access denied, unknown database, prepared statements full.
        for busy: UInt32 in [1040, 1205, 1213, 1045, 1049, 1461] {
            XCTAssertEqual(answer(busy), "database_unavailable", "\(busy)")
        }
        // The client library's own errors: can't connect (2002, 2003), server gone away (2006), lost (2013).
        for client: UInt32 in [2000, 2002, 2003, 2006, 2013, 2999] {
            XCTAssertEqual(answer(client), "database_unavailable", "\(client)")
        }
        // A Galera node out of the primary component (1047), or a lost connection with a server number.
        XCTAssertEqual(answer(1047, serverUnavailable: true), "database_unavailable")
        XCTAssertEqual(answer(1927, serverUnavailable: true), "database_unavailable")
        XCTAssertEqual(DatabaseFailureAnswer.apiError(errorNumber: 1205, serverUnavailable: false).httpStatus, 503)
    }

    func testAWrongStatementIsAnInternalError() {
        // Syntax error, unknown column, duplicate key, data too long, a write that touched no row (0).
        for wrong: UInt32 in [1064, 1054, 1062, 1406, 0, 3000, 1999] {
            XCTAssertEqual(answer(wrong), "internal_error", "\(wrong)")
        }
        XCTAssertEqual(DatabaseFailureAnswer.apiError(errorNumber: 1064, serverUnavailable: false).httpStatus, 500)
    }
}
