@testable import IAPService
import XCTest

/// What the service reads of nginx's FastCGI parameters before anything else.
final class RequestReaderTests: XCTestCase {
    private func head(_ parameters: [String: String]) -> RequestReader.Head {
        RequestReader.head { parameters[$0] }
    }

    func testThePathIsTheDocumentURIWithoutItsQuery() {
        let read = head([
            "REQUEST_METHOD": "POST", "DOCUMENT_URI": "/v1/orders", "REQUEST_URI": "/v1/orders?x=1",
            "REQUEST_ID": "8c1e9d4a",
        ])
        XCTAssertEqual(read.method, "POST")
        XCTAssertEqual(read.path, "/v1/orders")
        XCTAssertEqual(read.requestID, "8c1e9d4a")
        XCTAssertEqual(head(["REQUEST_URI": "/v1/version?app_version=1.2"]).path, "/v1/version")
        XCTAssertEqual(head(["DOCUMENT_URI": "/v1/version?"]).path, "/v1/version")
    }

    func testMissingParametersHaveDefaultsThatRouteNowhere() {
        let read = head([:])
        XCTAssertEqual(read.method, "GET")
        XCTAssertEqual(read.path, "/")
        XCTAssertEqual(read.requestID, "-", "no X-Request-Id is echoed for it")
        XCTAssertEqual(head(["DOCUMENT_URI": "?only=query"]).path, "")
    }
}
