extension Base64 {
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// base64url without padding (RFC 4648 section 5), as JWS and JWT write it.
    public static func encodeURL(_ bytes: some Collection<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            let characters = third != nil ? 4 : second != nil ? 3 : 2
            for index in 0..<characters {
                text.append(urlAlphabet[Int(group >> UInt32(18 - 6 * index) & 0x3F)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
