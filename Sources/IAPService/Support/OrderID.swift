import Glibc

/// New order ids: random (version 4) UUIDs in lowercase, as the client puts
/// them in `applicationUsername` and StoreKit 2 takes them as `appAccountToken`.
enum OrderID {
    static func make() -> String {
        // 128 bits from the kernel's CSPRNG in one system call (glibc's
        // `arc4random_buf` is `getrandom`; the standard library's generator makes
        // one call per 64 bits, and an order is made per delivery).
        var bytes = [UInt8](repeating: 0, count: 16)
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
