import XCTest
@testable import IAPCore

final class RouteTests: XCTestCase {
    func testEveryRouteMatchesItsPathAndMethod() throws {
        for route in Route.allCases {
            XCTAssertEqual(try Route.match(method: route.method, path: route.path).get(), route)
        }
    }

    func testUnknownPathIsNotFound() {
        XCTAssertEqual(Route.match(method: "GET", path: "/v1/nope"), .failure(.notFound))
        XCTAssertEqual(Route.match(method: "POST", path: "/v1/orders/"), .failure(.notFound))
    }

    func testWrongMethodIsMethodNotAllowed() {
        XCTAssertEqual(Route.match(method: "GET", path: "/v1/orders"), .failure(.methodNotAllowed))
        XCTAssertEqual(Route.match(method: "PUT", path: "/v1/receipts/verify"), .failure(.methodNotAllowed))
        XCTAssertEqual(Route.match(method: "POST", path: "/v1/version"), .failure(.methodNotAllowed))
        XCTAssertEqual(Route.match(method: "GET", path: "/v1/transactions/verify"), .failure(.methodNotAllowed))
        XCTAssertEqual(Route.match(method: "POST", path: "/v1/transactions/verify"), .success(.verifyTransaction))
    }

    func testHeadIsServedLikeGet() {
        XCTAssertEqual(Route.match(method: "HEAD", path: "/v1/health"), .success(.health))
    }

    func testQueryStringValueIsPercentDecoded() {
        XCTAssertEqual(QueryString.value(of: "app_version", in: "x=1&app_version=1.3.0"), "1.3.0")
        XCTAssertEqual(QueryString.value(of: "app_version", in: "app_version=1%2E3+b"), "1.3 b")
        XCTAssertEqual(QueryString.value(of: "app_version", in: "app_version"), "")
        XCTAssertNil(QueryString.value(of: "app_version", in: "other=1"))
        XCTAssertNil(QueryString.value(of: "app_version", in: "app_version=%zz"))
    }
}
