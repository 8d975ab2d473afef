import XCTest

@testable import IAPCore

final class BoundedDictionaryTests: XCTestCase {
    func testTheOldestInsertionGoesFirst() {
        var dictionary = BoundedDictionary<String, Int>(capacity: 2)
        dictionary.insert(1, for: "a")
        dictionary.insert(2, for: "b")
        dictionary.insert(3, for: "c")
        XCTAssertEqual(dictionary.count, 2)
        XCTAssertNil(dictionary["a"])
        XCTAssertEqual(dictionary["b"], 2)
        XCTAssertEqual(dictionary["c"], 3)
    }

    func testAKeyAlreadyThereKeepsItsValueAndPlace() {
        var dictionary = BoundedDictionary<String, Int>(capacity: 2)
        dictionary.insert(1, for: "a")
        dictionary.insert(9, for: "a")
        dictionary.insert(2, for: "b")
        XCTAssertEqual(dictionary["a"], 1)
        XCTAssertEqual(dictionary.count, 2)
        dictionary.insert(3, for: "c")
        XCTAssertNil(dictionary["a"])
    }

    func testCapacityIsAtLeastOne() {
        var dictionary = BoundedDictionary<Int, Int>(capacity: 0)
        dictionary.insert(1, for: 1)
        XCTAssertEqual(dictionary[1], 1)
        dictionary.insert(2, for: 2)
        XCTAssertEqual(dictionary.count, 1)
    }
}
