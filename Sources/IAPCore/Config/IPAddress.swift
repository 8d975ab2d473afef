/// An IPv4 or IPv6 address in binary form: the allowed FastCGI clients
/// (`IAP_FCGI_ALLOWED_ADDRESSES`), compared with the address a connection comes from.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, how a socket
    /// listening on `[::]` sees an IPv4 client) is its IPv4 address, so both forms compare equal.
    public let bytes: [UInt8]

    /// From 4 or 16 bytes; nil for any other count.
    public init?(bytes: [UInt8]) {
        switch bytes.count {
        case 4: self.bytes = bytes
        case 16 where bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff:
            self.bytes = Array(bytes[12...])
        case 16: self.bytes = bytes
        default: return nil
        }
    }

    /// From `203.0.113.7`, `2001:db8::1` or `::ffff:203.0.113.7`; nil for anything else
    /// (host names, zone ids, prefixes).
    public init?(_ text: String) {
        guard let bytes = text.contains(":") ? Self.ipv6Bytes(Substring(text)) : Self.ipv4Bytes(Substring(text))
        else { return nil }
        self.init(bytes: bytes)
    }

    /// 127.0.0.0/8 or ::1: only this host can connect from there.
    public var isLoopback: Bool {
        bytes.count == 4 ? bytes[0] == 127 : bytes == Array(repeating: 0, count: 15) + [1]
    }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2)
            .map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    private static func ipv4Bytes(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy(isDecimalDigit),
                part.utf8.count == 1 || part.utf8.first != UInt8(ascii: "0"),
                let byte = UInt8(part)
            else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    private static func ipv6Bytes(_ text: Substring) -> [UInt8]? {
        let gaps = text.ranges(of: "::")
        guard gaps.count <= 1 else { return nil }
        guard let head = ipv6Groups(gaps.first.map { text[..<$0.lowerBound] } ?? text, endsAddress: gaps.isEmpty)
        else { return nil }
        var groups = head
        if let gap = gaps.first {
            guard let tail = ipv6Groups(text[gap.upperBound...], endsAddress: true), head.count + tail.count <= 7
            else { return nil }
            groups += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        guard groups.count == 8 else { return nil }
        return groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    /// The 16-bit groups of one side of `::` (empty text: none). The last group of the address
    /// may be an IPv4 address, which counts as two groups.
    private static func ipv6Groups(_ text: Substring, endsAddress: Bool) -> [UInt16]? {
        if text.isEmpty { return [] }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var groups: [UInt16] = []
        for (index, part) in parts.enumerated() {
            if endsAddress && index == parts.count - 1 && part.contains(".") {
                guard let ipv4 = ipv4Bytes(part) else { return nil }
                groups += [UInt16(ipv4[0]) << 8 | UInt16(ipv4[1]), UInt16(ipv4[2]) << 8 | UInt16(ipv4[3])]
            } else {
                guard (1...4).contains(part.utf8.count), let group = UInt16(part, radix: 16),
                    part.utf8.allSatisfy({ isDecimalDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0 | 0x20) })
                else { return nil }
                groups.append(group)
            }
        }
        return groups
    }

    private static func isDecimalDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
