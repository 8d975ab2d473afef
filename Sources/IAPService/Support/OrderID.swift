/// New order ids: random (version 4) UUIDs in lowercase, as the client puts
/// them in `applicationUsername` and StoreKit 2 takes them as `appAccountToken`.
enum OrderID {
    static func make() -> String {
        // Two draws of 64 bits from the system's CSPRNG (one system call each).
        var generator = SystemRandomNumberGenerator()
        let random = (generator.next() as UInt64, generator.next() as UInt64)
        var bytes = withUnsafeBytes(of: random) { Array($0) }
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
