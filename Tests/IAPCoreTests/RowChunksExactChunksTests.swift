import XCTest

@testable import IAPCore

final class RowChunksExactChunksTests: XCTestCase {
    func testExactChunksCutTheValuesAtTheExactSizesInOrder() {
        XCTAssertEqual(RowChunks.exactChunks([Int]()).map(Array.init), [])
        XCTAssertEqual(RowChunks.exactChunks([5, 6, 7]).map(Array.init), [[5, 6, 7]])
        XCTAssertEqual(RowChunks.exactChunks(Array(0..<40)).map(Array.init), [Array(0..<16), Array(16..<32), Array(32..<40)])
        for count in 0...50 {
            let values = Array(0..<count)
            let chunks = RowChunks.exactChunks(values)
            XCTAssertEqual(chunks.map(\.count), RowChunks.exact(count), "\(count)")
            XCTAssertEqual(chunks.flatMap { $0 }, values, "\(count)")
        }
    }
}
