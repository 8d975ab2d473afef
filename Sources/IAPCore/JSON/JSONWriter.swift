/// Compact UTF-8 serialisation of `JSONValue`: no whitespace, members in their
/// stored order. In strings, `"` `\` and control characters are escaped
/// (`\n \r \t \b \f`, the others as `\u00XX`); everything else, `/` and
/// non-ASCII included, is written as its UTF-8 bytes. A `.number` is written as
/// its stored text, which must be a valid JSON number (the parser and
/// `JSONValue.int(_:)` only make such ones).
extension JSONValue {
    /// The compact UTF-8 text of this value.
    /// - Parameter capacity: the bytes to reserve, when the caller knows about
    ///   how long the text will be (a receipt's body): no regrowth on the way.
    public func serialized(capacity: Int = 256) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(capacity)
        JSONWriter.write(self, to: &output)
        return output
    }

    /// The compact text of this value, as a `String`.
    public var serializedString: String {
        String(decoding: serialized(), as: UTF8.self)
    }
}

private enum JSONWriter {
    static func write(_ value: JSONValue, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: flag ? "true".utf8 : "false".utf8)
        case .number(let text): output.append(contentsOf: text.utf8)
        case .string(let text): writeString(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text  // withUTF8 makes a non-contiguous string contiguous in place
        text.withUTF8 { appendEscaped($0, to: &output) }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `bytes`, copying runs that need no escape in one go.
    static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        var runStart = 0
        var position = 0
        while true {
            position = PlainASCIIRun.end(in: bytes, from: position)
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                appendEscape(for: byte, to: &output)
                runStart = position + 1
            }
            position += 1  // an escaped byte, or non-ASCII (written as it is)
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }

    static func appendEscape(for byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: output.append(UInt8(ascii: "\""))
        case 0x5C: output.append(UInt8(ascii: "\\"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        default:
            output.append(contentsOf: "u00".utf8)
            output.append(hexDigit(byte >> 4))
            output.append(hexDigit(byte & 0x0F))
        }
    }

    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
