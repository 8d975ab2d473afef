@testable import IAPService
@testable import MariaDB
import IAPCore
import XCTest

/// The answers' one error shape, and how a database failure becomes one.
final class ResponseTests: XCTestCase {
    private func json(_ response: Response) throws -> JSONObject {
        try XCTUnwrap(try JSONParser.parse(response.body).objectValue)
    }

    private func header(_ name: String, _ response: Response) -> String? {
        response.headers.first { $0.0 == name }?.1
    }

    func testAnErrorIsTheContractsShapeWithItsStatus() throws {
        let response = Response.error(.orderUserMismatch)
        XCTAssertEqual(response.status, 409)
        XCTAssertEqual(response.reason, "Conflict")
        let error = try XCTUnwrap(try json(response)["error"]?.objectValue)
        XCTAssertEqual(error["code"], .string("order_user_mismatch"))
        XCTAssertEqual(error["message"], .string(APIError.orderUserMismatch.message))
        XCTAssertEqual(header("Content-Type", response), "application/json; charset=utf-8")
        XCTAssertEqual(header("Cache-Control", response), "no-store")
        XCTAssertNil(header("Retry-After", response))
        XCTAssertEqual(response.outcome.errorCode, "order_user_mismatch")
    }

    func testOnlyAnUnavailableServiceSaysWhenToRetry() {
        XCTAssertEqual(header("Retry-After", Response.error(.databaseUnavailable)), "5")
        XCTAssertNil(header("Retry-After", Response.error(.internalError)))
    }

    func testEveryStatusTheServiceAnswersHasItsReasonPhrase() {
        for status in [200, 201, 202, 303, 400, 403, 404, 405, 409, 413, 422, 500, 503] {
            XCTAssertNotEqual(Response(status: status, headers: [], body: []).reason, "Status", "\(status)")
        }
    }

    func testAVerifyAnswersLogLineCarriesItsStatusNotItsReceipt() {
        let answer = VerifyAnswer(status: .notPaid, environment: .sandbox, appleStatus: 21003)
        let response = Response.verify(answer)
        XCTAssertEqual(response.status, answer.httpStatus)
        XCTAssertEqual(response.outcome.verifyStatus, "not_paid")
        XCTAssertEqual(response.outcome.appleStatus, 21003)
        XCTAssertEqual(response.outcome.environment, "Sandbox")
    }

    /// The glue hands `DatabaseFailureAnswer` what only the wrapper knows: a
    /// Galera node without quorum (1047) is a server unavailable, not a wrong statement.
    func testADatabaseFailureIsAnsweredByWhatTheWrapperKnows() {
        func error(_ code: UInt32) -> MariaDBError {
            MariaDBError(code: code, sqlState: "HY000", function: "mysql_stmt_execute", message: "")
        }
        XCTAssertEqual(error(MariaDBError.nodeNotReady).apiError, .databaseUnavailable)
        XCTAssertEqual(error(1927).apiError, .databaseUnavailable, "connection killed")
        XCTAssertEqual(error(1213).apiError, .databaseUnavailable, "deadlock")
        XCTAssertEqual(error(1064).apiError, .internalError, "syntax error")
        XCTAssertEqual(MariaDBError.unexpectedRowCount("update", expected: 1, got: 0).apiError, .internalError)
    }
}
