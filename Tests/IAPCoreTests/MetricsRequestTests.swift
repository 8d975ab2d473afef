import XCTest

@testable import IAPCore

final class MetricsRequestTests: XCTestCase {
    private func answer(_ head: String) -> MetricsRequest {
        MetricsRequest(head: Array(head.utf8))
    }

    func testOnlyGetMetricsIsServed() {
        XCTAssertEqual(answer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"), .metrics)
        XCTAssertEqual(answer("GET /metrics?name[]=up HTTP/1.0\r\n\r\n"), .metrics)
        XCTAssertEqual(answer("HEAD /metrics HTTP/1.1\r\n\r\n"), .metrics)
        XCTAssertEqual(answer("POST /metrics HTTP/1.1\r\n\r\n"), .methodNotAllowed)
        XCTAssertEqual(answer("GET /v1/health HTTP/1.1\r\n\r\n"), .notFound)
        XCTAssertEqual(answer("GET /metricsx HTTP/1.1\r\n\r\n"), .notFound)
        XCTAssertEqual(answer("GET / HTTP/1.1\r\n\r\n"), .notFound)
    }

    func testWhatIsNotARequestLineIsMalformed() {
        for head in ["", "GET /metrics\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n", "GET metrics HTTP/1.1\r\n\r\n",
                     "GET /metrics HTTP/2\r\n\r\n", "\u{16}\u{03}\u{01}"] {
            XCTAssertEqual(answer(head), .malformed, head.debugDescription)
        }
        XCTAssertEqual(MetricsRequest.malformed.status.code, 400)
        XCTAssertEqual(MetricsRequest.metrics.status.code, 200)
    }

    func testAHeadIsCompleteAtItsBlankLine() {
        XCTAssertFalse(MetricsRequest.isComplete(Array("GET /metrics HTTP/1.1\r\nHost: x\r\n".utf8)))
        XCTAssertTrue(MetricsRequest.isComplete(Array("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
        XCTAssertTrue(MetricsRequest.isComplete(Array("GET /metrics HTTP/1.0\n\n".utf8)))
        XCTAssertFalse(MetricsRequest.isComplete(Array("\r\n".utf8)))
    }

    func testDaysLeftCountFromNowAndGoNegative() {
        let lifetime = CertificateLifetime(subject: "CN=x", notValidAfterMs: 30 * 86_400_000)
        XCTAssertEqual(lifetime.daysLeft(nowMs: 0), 30)
        XCTAssertEqual(lifetime.daysLeft(nowMs: 30 * 86_400_000 + 43_200_000), -0.5)
    }
}
