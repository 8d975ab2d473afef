import XCTest

@testable import IAPCore

final class ProductTypeTests: XCTestCase {
    func testOnlyAConsumableIsConsumedAtGoogle() {
        XCTAssertTrue(ProductType(stored: "consumable").isConsumedAtGoogle)
        XCTAssertFalse(ProductType(stored: "non_consumable").isConsumedAtGoogle)
        XCTAssertFalse(ProductType(stored: "subscription").isConsumedAtGoogle)
    }

    func testAProductNoLongerInTheCatalogCountsAsConsumable() {
        XCTAssertEqual(ProductType(stored: nil), .consumable)
        XCTAssertEqual(ProductType(stored: "something_else"), .consumable)
    }

    func testTheStoredNamesAreTheColumnsEnum() {
        XCTAssertEqual(ProductType.allCases.map(\.rawValue), ["consumable", "non_consumable", "subscription"])
    }
}
