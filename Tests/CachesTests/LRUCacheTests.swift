import XCTest

@testable import Caches

final class LRUCacheTests: XCTestCase {
    func testHoldsUpToCapacityAndDropsTheLeastRecentlyUsed() {
        var cache = LRUCache<String, Int>(capacity: 3)
        XCTAssertNil(cache.insert(1, for: "a"))
        XCTAssertNil(cache.insert(2, for: "b"))
        XCTAssertNil(cache.insert(3, for: "c"))
        XCTAssertEqual(cache.value(for: "a"), 1)   // "b" is now the least recently used
        XCTAssertEqual(cache.insert(4, for: "d"), 2)
        XCTAssertEqual(cache.count, 3)
        XCTAssertNil(cache.value(for: "b"))
        XCTAssertEqual(cache.keysByRecency, ["d", "a", "c"])
        XCTAssertEqual(cache.insert(5, for: "e"), 3)
        XCTAssertEqual(cache.keysByRecency, ["e", "d", "a"])
    }

    func testReplacingAKeyHandsBackItsOldValueAndKeepsTheOthers() {
        var cache = LRUCache<String, Int>(capacity: 2)
        cache.insert(1, for: "a")
        cache.insert(2, for: "b")
        XCTAssertEqual(cache.insert(10, for: "a"), 1)
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(cache.keysByRecency, ["a", "b"])
        XCTAssertEqual(cache.value(for: "b"), 2)
        XCTAssertEqual(cache.value(for: "a"), 10)
    }

    func testCapacityOfOneKeepsOnlyTheLastInserted() {
        var cache = LRUCache<Int, String>(capacity: 1)
        XCTAssertNil(cache.insert("one", for: 1))
        XCTAssertEqual(cache.insert("two", for: 2), "one")
        XCTAssertNil(cache.value(for: 1))
        XCTAssertEqual(cache.value(for: 2), "two")
    }

    func testRemoveAllHandsBackEveryValueAndTheCacheFillsAgain() {
        var cache = LRUCache<Int, Int>(capacity: 4)
        for key in 0..<6 { cache.insert(key * 10, for: key) }
        XCTAssertEqual(cache.removeAll(), [50, 40, 30, 20])
        XCTAssertEqual(cache.count, 0)
        XCTAssertNil(cache.value(for: 5))
        cache.insert(7, for: 7)
        XCTAssertEqual(cache.keysByRecency, [7])
    }

    /// Against a plain model over many random operations: same contents, same
    /// order, same evictions.
    func testMatchesASimpleModel() {
        var cache = LRUCache<Int, Int>(capacity: 8)
        var model: [(key: Int, value: Int)] = []   // most recent first
        var generator = SystemRandomNumberGenerator()
        for step in 0..<5_000 {
            let key = Int.random(in: 0..<20, using: &generator)
            if Bool.random(using: &generator) {
                let expected = model.firstIndex { $0.key == key }.map { model.remove(at: $0) }
                if let expected { model.insert(expected, at: 0) }
                XCTAssertEqual(cache.value(for: key), expected?.value, "step \(step)")
            } else {
                var pushedOut: Int?
                if let index = model.firstIndex(where: { $0.key == key }) {
                    pushedOut = model.remove(at: index).value
                } else if model.count == 8 {
                    pushedOut = model.removeLast().value
                }
                model.insert((key, step), at: 0)
                XCTAssertEqual(cache.insert(step, for: key), pushedOut, "step \(step)")
            }
            XCTAssertEqual(cache.keysByRecency, model.map(\.key), "step \(step)")
        }
    }
}
