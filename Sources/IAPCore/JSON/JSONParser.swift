/// Why a JSON text was refused: a message fit to show a client, and the byte
/// offset in the input where the parser stopped.
public struct JSONParseError: Error, Equatable, Sendable {
    /// For people, e.g. `"unexpected character at offset 12"`. It names the
    /// offset and the kind of problem, never the input itself.
    public let message: String
    /// Offset, in bytes from the start of the input, of the offending byte.
    public let offset: Int

    public init(message: String, offset: Int) {
        self.message = message
        self.offset = offset
    }

    fileprivate init(_ problem: String, at offset: Int) {
        self.init(message: "\(problem) at offset \(offset)", offset: offset)
    }
}

/// A strict RFC 8259 parser: exactly one value with optional whitespace around
/// it; strings must be valid UTF-8 with no unescaped control characters and no
/// lone surrogates in `\u` escapes; numbers must follow the JSON grammar and are
/// kept as their source text. Members of an object keep their source order,
/// duplicates included (`JSONObject` answers lookups with the first one).
///
/// It parses every request body and every Apple answer, so it walks a byte
/// buffer by index and copies each string once.
public enum JSONParser {
    /// The nesting depth allowed by default: deeper than any body this service
    /// reads, and shallow enough that recursion cannot exhaust the stack.
    public static let defaultMaxDepth = 32

    /// Parses `bytes` as one JSON text.
    /// - Parameter maxDepth: how many arrays and objects may nest; a top-level
    ///   object is depth 1.
    public static func parse(
        _ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            parseBuffer(buffer, maxDepth: maxDepth)
        }
        switch result ?? Array(bytes).withUnsafeBufferPointer({ parseBuffer($0, maxDepth: maxDepth) }) {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    private static func parseBuffer(
        _ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int
    ) -> Result<JSONValue, JSONParseError> {
        var reader = Reader(bytes: buffer, maxDepth: maxDepth)
        do throws(JSONParseError) {
            return .success(try reader.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}

// MARK: - The reader

/// ASCII bytes the grammar names.
private enum Byte {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0
    /// Reused for strings with escapes, so that each one costs no new buffer.
    var scratch: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw JSONParseError("unexpected data after the JSON value", at: index)
        }
        return value
    }

    // MARK: Values

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else {
            throw JSONParseError("unexpected end of input", at: index)
        }
        switch bytes[index] {
        case Byte.quote: return .string(try parseString())
        case Byte.openBrace: return try parseObject()
        case Byte.openBracket: return try parseArray()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case Byte.minus, Byte.zero...Byte.nine: return .number(try parseNumber())
        default: throw unexpectedCharacter()
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // {
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if try peek() == Byte.closeBrace {
            index += 1
            depth -= 1
            return .object(JSONObject(members))
        }
        while true {
            guard try peek() == Byte.quote else { throw unexpectedCharacter() }
            let key = try parseString()
            skipWhitespace()
            guard try peek() == Byte.colon else { throw unexpectedCharacter() }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append((key: key, value: value))
            skipWhitespace()
            switch try peek() {
            case Byte.comma:
                index += 1
                skipWhitespace()
            case Byte.closeBrace:
                index += 1
                depth -= 1
                return .object(JSONObject(members))
            default:
                throw unexpectedCharacter()
            }
        }
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == Byte.closeBracket {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            switch try peek() {
            case Byte.comma:
                index += 1
                skipWhitespace()
            case Byte.closeBracket:
                index += 1
                depth -= 1
                return .array(elements)
            default:
                throw unexpectedCharacter()
            }
        }
    }

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth {
            throw JSONParseError("nesting deeper than \(maxDepth) levels", at: index)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        for expected in UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount) {
            guard index < bytes.count else {
                throw JSONParseError("unexpected end of input", at: index)
            }
            guard bytes[index] == expected else {
                throw JSONParseError("unexpected character", at: index)
            }
            index += 1
        }
    }

    // MARK: Numbers

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as written.
    mutating func parseNumber() throws(JSONParseError) -> String {
        let start = index
        if bytes[index] == Byte.minus { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw numberError() }
        if bytes[index] == Byte.zero {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw JSONParseError("invalid number (leading zero)", at: index)
            }
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == Byte.dot {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw numberError() }
            skipDigits()
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == Byte.plus || bytes[index] == Byte.minus { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw numberError() }
            skipDigits()
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= Byte.zero && byte <= Byte.nine }

    mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    func numberError() -> JSONParseError {
        index < bytes.count
            ? JSONParseError("invalid number", at: index)
            : JSONParseError("unexpected end of input", at: index)
    }

    // MARK: Strings

    /// Reads a string starting at its opening quote. A string without escapes
    /// is validated in place and copied once; one with escapes is assembled in
    /// `scratch`.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        while true {
            index = PlainASCIIRun.end(in: bytes, from: index)
            guard index < bytes.count else {
                throw JSONParseError("unterminated string", at: index)
            }
            let byte = bytes[index]
            if byte == Byte.quote {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == Byte.backslash {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                return try parseEscapedRest()
            }
            try skipStringByte(byte)
        }
    }

    /// The rest of a string once the first backslash is reached.
    mutating func parseEscapedRest() throws(JSONParseError) -> String {
        while true {
            guard index < bytes.count else {
                throw JSONParseError("unterminated string", at: index)
            }
            let byte = bytes[index]
            if byte == Byte.quote {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte == Byte.backslash {
                try appendEscape()
            } else {
                let start = index
                try skipStringByte(byte)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
            }
        }
    }

    /// Steps over one unescaped character of a string (one to four bytes),
    /// refusing control characters and invalid UTF-8.
    mutating func skipStringByte(_ byte: UInt8) throws(JSONParseError) {
        if byte < 0x20 {
            throw JSONParseError("unescaped control character in string", at: index)
        }
        if byte < 0x80 {
            index += 1
        } else {
            index += try validUTF8SequenceLength(at: index)
        }
    }

    /// The length of the well-formed UTF-8 sequence at `position` (Unicode
    /// Table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF).
    func validUTF8SequenceLength(at position: Int) throws(JSONParseError) -> Int {
        let lead = bytes[position]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default: throw JSONParseError("invalid UTF-8", at: position)
        }
        guard position + length <= bytes.count else {
            throw JSONParseError("invalid UTF-8", at: position)
        }
        let second = bytes[position + 1]
        guard second >= lower && second <= upper else {
            throw JSONParseError("invalid UTF-8", at: position)
        }
        for offset in 2..<length where bytes[position + offset] & 0xC0 != 0x80 {
            throw JSONParseError("invalid UTF-8", at: position)
        }
        return length
    }

    /// Decodes the escape at `index` (a backslash) into `scratch`.
    mutating func appendEscape() throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard index < bytes.count else {
            throw JSONParseError("unterminated string", at: index)
        }
        let letter = bytes[index]
        index += 1
        switch letter {
        case Byte.quote, Byte.backslash, Byte.slash: scratch.append(letter)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            let scalar = try readUnicodeEscape(escapeStart: escapeStart)
            appendUTF8(scalar)
        default:
            throw JSONParseError("invalid escape sequence", at: escapeStart)
        }
    }

    /// Reads the hex digits of a `\u` escape (the `\u` already consumed) and,
    /// for a high surrogate, the low surrogate escape that must follow.
    mutating func readUnicodeEscape(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        let first = try readHex4(escapeStart: escapeStart)
        switch first {
        case 0xD800...0xDBFF:
            let lowStart = index
            guard index + 1 < bytes.count, bytes[index] == Byte.backslash,
                bytes[index + 1] == UInt8(ascii: "u")
            else {
                throw JSONParseError("lone surrogate in \\u escape", at: escapeStart)
            }
            index += 2
            let second = try readHex4(escapeStart: lowStart)
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONParseError("lone surrogate in \\u escape", at: escapeStart)
            }
            return 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        case 0xDC00...0xDFFF:
            throw JSONParseError("lone surrogate in \\u escape", at: escapeStart)
        default:
            return first
        }
    }

    mutating func readHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else {
            throw JSONParseError("invalid \\u escape", at: escapeStart)
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case Byte.zero...Byte.nine: digit = byte - Byte.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError("invalid \\u escape", at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Helpers

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// The byte at `index`; the end of the input is an error here.
    func peek() throws(JSONParseError) -> UInt8 {
        guard index < bytes.count else {
            throw JSONParseError("unexpected end of input", at: index)
        }
        return bytes[index]
    }

    func unexpectedCharacter() -> JSONParseError {
        index < bytes.count
            ? JSONParseError("unexpected character", at: index)
            : JSONParseError("unexpected end of input", at: index)
    }
}
