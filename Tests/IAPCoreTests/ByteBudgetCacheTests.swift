import IAPCore
import XCTest

final class ByteBudgetCacheTests: XCTestCase {
    func testKeepsWhatFitsAndDropsTheLeastRecentlyUsedFirst() {
        var cache = ByteBudgetCache<String, Int>(budgetBytes: 100)
        cache.insert(1, for: "a", bytes: 40)
        cache.insert(2, for: "b", bytes: 40)
        XCTAssertEqual(cache.value(for: "a"), 1)  // "b" is now the least recently used

        cache.insert(3, for: "c", bytes: 40)

        XCTAssertNil(cache.value(for: "b"))
        XCTAssertEqual(cache.value(for: "a"), 1)
        XCTAssertEqual(cache.value(for: "c"), 3)
        XCTAssertEqual(cache.count, 2)
        XCTAssertEqual(cache.usedBytes, 80)
    }

    func testALargeValueDropsAsManyAsItNeeds() {
        var cache = ByteBudgetCache<Int, String>(budgetBytes: 100)
        for key in 0..<10 { cache.insert("\(key)", for: key, bytes: 10) }

        cache.insert("big", for: 99, bytes: 75)

        XCTAssertEqual((0..<10).filter { cache.value(for: $0) != nil }, [8, 9])
        XCTAssertEqual(cache.value(for: 99), "big")
        XCTAssertEqual(cache.usedBytes, 95)
    }

    func testAValueOverTheWholeBudgetIsNotKept() {
        var cache = ByteBudgetCache<String, Int>(budgetBytes: 100)
        cache.insert(1, for: "a", bytes: 50)

        cache.insert(2, for: "huge", bytes: 101)

        XCTAssertNil(cache.value(for: "huge"))
        XCTAssertEqual(cache.value(for: "a"), 1)
        XCTAssertEqual(cache.usedBytes, 50)
    }

    func testReplacingAKeyCountsOnlyItsNewSize() {
        var cache = ByteBudgetCache<String, Int>(budgetBytes: 100)
        cache.insert(1, for: "a", bytes: 60)
        cache.insert(2, for: "a", bytes: 30)

        XCTAssertEqual(cache.value(for: "a"), 2)
        XCTAssertEqual(cache.count, 1)
        XCTAssertEqual(cache.usedBytes, 30)

        cache.remove("a")
        XCTAssertNil(cache.value(for: "a"))
        XCTAssertEqual(cache.usedBytes, 0)
    }

    func testStaysWithinItsBudgetUnderAnyMixOfOperations() {
        var cache = ByteBudgetCache<Int, Int>(budgetBytes: 1000)
        var generator = SystemRandomNumberGenerator()
        var lastUsed: [Int: Int] = [:]
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<200, using: &generator)
            if Bool.random(using: &generator) {
                cache.insert(step, for: key, bytes: Int.random(in: 1...120, using: &generator))
                lastUsed[key] = step
            } else if let value = cache.value(for: key) {
                XCTAssertEqual(value, lastUsed[key], "a key answered another key's value")
            }
            XCTAssertLessThanOrEqual(cache.usedBytes, 1000)
        }
        XCTAssertGreaterThan(cache.count, 0)
    }
}
