import Glibc

/// New order ids: random (version 4) UUIDs in lowercase, as the client puts
/// them in `applicationUsername` and StoreKit 2 takes them as `appAccountToken`.
enum OrderID {
    static func make() -> String {
        var bytes = randomness.withLock { $0.take16() }
        bytes.6 = bytes.6 & 0x0F | 0x40
        bytes.8 = bytes.8 & 0x3F | 0x80
        return withUnsafeBytes(of: bytes) { random in
            String(unsafeUninitializedCapacity: 36) { text in
                var end = 0
                for (index, byte) in random.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[end] = UInt8(ascii: "-")
                        end += 1
                    }
                    text[end] = hexDigit(byte >> 4)
                    text[end + 1] = hexDigit(byte & 0x0F)
                    end += 2
                }
                return end
            }
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The kernel's CSPRNG read 1 KiB at a time (`arc4random_buf` is glibc's
    /// `getrandom`): an order is made per delivered transaction, and one system
    /// call per id was a sixth of the delivery thread's system calls (strace,
    /// bench case e1). Each id takes bytes no other id had.
    private static let randomness = Locked(RandomBytes())

    private struct RandomBytes {
        private var buffer = [UInt8](repeating: 0, count: 1024)
        private var next = 1024

        typealias Sixteen = (
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
            UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
        )

        mutating func take16() -> Sixteen {
            if next + 16 > buffer.count {
                buffer.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                next = 0
            }
            defer {
                // Not kept once handed out.
                buffer.withUnsafeMutableBytes { _ = memset($0.baseAddress! + next, 0, 16) }
                next += 16
            }
            return buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: next, as: Sixteen.self) }
        }
    }
}
