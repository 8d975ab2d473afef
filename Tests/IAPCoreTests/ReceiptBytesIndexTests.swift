import XCTest

@testable import IAPCore

final class ReceiptBytesIndexTests: XCTestCase {
    private let first = String(repeating: "ab", count: 32)
    private let second = String(repeating: "0f", count: 32)
    private let hour: Int64 = 3600 * 1000

    func testANewReceiptStoresItsBytesAndLaterRowsNameTheRowThatHoldsThem() {
        var index = ReceiptBytesIndex(capacity: 8)
        XCTAssertEqual(index.place([(first, 0)]), [.stored])
        index.remember(sha256Hex: first, receiptID: 41, receivedAtMs: 0)
        XCTAssertEqual(index.place([(first, hour), (second, hour)]), [.storedIn(receiptID: 41), .stored])
    }

    func testTheSameBytesTwiceInOneBatchAreStoredByTheFirst() {
        var index = ReceiptBytesIndex(capacity: 8)
        XCTAssertEqual(
            index.place([(first, 0), (second, 0), (first, 0), (first, 1)]),
            [.stored, .stored, .storedWithReceipt(at: 0), .storedWithReceipt(at: 0)])
    }

    func testARowOlderThanTheWindowIsNotNamedAndTheNewRowTakesItsPlace() {
        var index = ReceiptBytesIndex(capacity: 8)
        index.remember(sha256Hex: first, receiptID: 1, receivedAtMs: 0)
        let late = ReceiptBytesIndex.windowMilliseconds + 1
        XCTAssertEqual(index.place([(first, ReceiptBytesIndex.windowMilliseconds)]), [.storedIn(receiptID: 1)])
        XCTAssertEqual(index.place([(first, late)]), [.stored])
        index.remember(sha256Hex: first, receiptID: 9, receivedAtMs: late)
        XCTAssertEqual(index.place([(first, late + hour)]), [.storedIn(receiptID: 9)])
        XCTAssertEqual(index.count, 1)
    }

    func testABatchPlacesEqualReceiptsAlikeEvenAcrossTheWindowsEnd() {
        var index = ReceiptBytesIndex(capacity: 8)
        index.remember(sha256Hex: first, receiptID: 3, receivedAtMs: 0)
        let end = ReceiptBytesIndex.windowMilliseconds
        XCTAssertEqual(
            index.place([(first, end), (first, end + 1)]), [.storedIn(receiptID: 3), .storedIn(receiptID: 3)])
    }

    func testTheWindowIsAtMostHalfOfPrunesShortestRetention() {
        XCTAssertLessThan(ReceiptBytesIndex.windowMilliseconds, 24 * hour / 2 + 1)
    }

    func testTheLeastRecentlyUsedRowIsForgottenWhenFull() {
        var index = ReceiptBytesIndex(capacity: 1)
        index.remember(sha256Hex: first, receiptID: 1, receivedAtMs: 0)
        index.remember(sha256Hex: second, receiptID: 2, receivedAtMs: 0)
        XCTAssertEqual(index.place([(first, 0), (second, 0)]), [.stored, .storedIn(receiptID: 2)])
    }

    func testHexDigitsOfEitherCaseAreOneDigestAndMalformedHashesAlwaysStore() {
        var index = ReceiptBytesIndex(capacity: 8)
        index.remember(sha256Hex: first.uppercased(), receiptID: 5, receivedAtMs: 0)
        XCTAssertEqual(index.place([(first, 0)]), [.storedIn(receiptID: 5)])
        index.remember(sha256Hex: "abc", receiptID: 6, receivedAtMs: 0)
        index.remember(sha256Hex: String(repeating: "g", count: 64), receiptID: 7, receivedAtMs: 0)
        XCTAssertEqual(index.count, 1)
        XCTAssertEqual(index.place([("abc", 0), ("abc", 0)]), [.stored, .stored])
    }
}
