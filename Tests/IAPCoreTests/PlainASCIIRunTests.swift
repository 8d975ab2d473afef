import XCTest

@testable import IAPCore

/// The word-at-a-time scan must stop exactly where a byte-by-byte one would,
/// wherever the special byte falls in or across the 8-byte words.
final class PlainASCIIRunTests: XCTestCase {
    private let specials: [UInt8] = [0x00, 0x1F, 0x22, 0x5C, 0x80, 0xC3, 0xFF]
    private let plainEdges: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x7F]

    func testStopsAtEachSpecialByteAtEveryOffset() {
        for length in 0...40 {
            for special in specials {
                for position in 0...length {
                    var bytes = (0..<length).map { plainEdges[$0 % plainEdges.count] }
                    if position < length { bytes[position] = special }
                    for start in [0, 1, 7, 8, 9].filter({ $0 <= length }) {
                        let expected = bytes[start...].firstIndex { !PlainASCIIRun.isPlain($0) } ?? length
                        let found = bytes.withUnsafeBufferPointer { PlainASCIIRun.end(in: $0, from: start) }
                        XCTAssertEqual(found, expected, "length \(length), \(special) at \(position), from \(start)")
                    }
                }
            }
        }
    }

    func testPlainBytesAreExactlyPrintableASCIIWithoutQuoteAndBackslash() {
        let plain = (0...255).map(UInt8.init).filter(PlainASCIIRun.isPlain)
        XCTAssertEqual(plain.count, 96 - 2)
        XCTAssertFalse(plain.contains(UInt8(ascii: "\"")))
        XCTAssertFalse(plain.contains(UInt8(ascii: "\\")))
        XCTAssertEqual(plain.first, 0x20)
        XCTAssertEqual(plain.last, 0x7F)
    }

    func testLongStringsRoundTripThroughWriterAndParser() throws {
        let base64 = String(repeating: "MIIT0QYJKoZIhvcNAQcCoIITwjCCE74CAQExCzAJBgUrDgMCGgUAMIIDcgYJKoZI+/==", count: 40)
        for inserted in ["", "\"", "\\", "\n", "é", "\u{7F}", "€"] {
            for position in [0, 5, 8, 1000, base64.count] {
                var text = base64
                text.insert(contentsOf: inserted, at: text.index(text.startIndex, offsetBy: position))
                let written = JSONValue.object(["receipt-data": .string(text)]).serialized()
                XCTAssertEqual(try JSONParser.parse(written).objectValue?["receipt-data"]?.stringValue, text)
            }
        }
    }
}
