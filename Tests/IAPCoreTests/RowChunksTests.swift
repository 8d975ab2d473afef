import XCTest

@testable import IAPCore

final class RowChunksTests: XCTestCase {
    func testExactIsOneStatementUpToTheLargestAndFullOnesBeforeTheRest() {
        XCTAssertEqual(RowChunks.exact(0), [])
        XCTAssertEqual(RowChunks.exact(1), [1])
        XCTAssertEqual(RowChunks.exact(13), [13])
        XCTAssertEqual(RowChunks.exact(16), [16])
        XCTAssertEqual(RowChunks.exact(17), [16, 1])
        XCTAssertEqual(RowChunks.exact(40), [16, 16, 8])
        for count in 0...100 {
            let sizes = RowChunks.exact(count)
            XCTAssertEqual(sizes.reduce(0, +), count)
            XCTAssertTrue(sizes.allSatisfy { (1...16).contains($0) }, "\(count): \(sizes)")
            XCTAssertTrue(sizes.dropLast().allSatisfy { $0 == 16 }, "\(count): \(sizes)")
            XCTAssertEqual(sizes.count == 1, count > 0 && RowChunks.fitInOneStatement(count), "\(count)")
        }
    }

    func testPaddedRepeatsTheLastValueUpToAWrittenSize() {
        XCTAssertEqual(RowChunks.padded([Int]()), [])
        XCTAssertEqual(RowChunks.padded([7]), [[7]])
        XCTAssertEqual(RowChunks.padded([1, 2, 3]), [[1, 2, 3, 3]])
        XCTAssertEqual(RowChunks.padded(Array(1...16)), [Array(1...16)])
        XCTAssertEqual(RowChunks.padded(Array(1...18)), [Array(1...16), [17, 18]])
        for count in 1...100 {
            let values = Array(0..<count)
            let chunks = RowChunks.padded(values)
            XCTAssertEqual(Set(chunks.joined()), Set(values), "\(count)")
            XCTAssertTrue(Set(chunks.map(\.count)).isSubset(of: [1, 2, 4, 8, 16]), "\(count): \(chunks.map(\.count))")
        }
    }
}
