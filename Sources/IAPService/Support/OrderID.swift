import Glibc
import IAPCore
import Synchronization

/// New order ids: random (version 4) UUIDs in lowercase, as the client puts
/// them in `applicationUsername` and StoreKit 2 takes them as `appAccountToken`.
enum OrderID {
    static func make() -> String {
        var bytes = randomness.withLock { $0.take16() }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return lowercaseHex(bytes, dashesBefore: [4, 6, 8, 10])
    }

    /// The kernel's CSPRNG read 1 KiB at a time (`arc4random_buf` is glibc's
    /// `getrandom`): an order is made per delivered transaction, and one system
    /// call per id was a sixth of the delivery thread's system calls (strace,
    /// bench case e1). Each id takes bytes no other id had.
    private static let randomness = Mutex(RandomBytes())

    private struct RandomBytes {
        private var buffer = [UInt8](repeating: 0, count: 1024)
        private var next = 1024

        mutating func take16() -> [UInt8] {
            if next + 16 > buffer.count {
                buffer.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                next = 0
            }
            let taken = Array(buffer[next..<next + 16])
            buffer.replaceSubrange(next..<next + 16, with: repeatElement(0, count: 16))  // not kept once handed out
            next += 16
            return taken
        }
    }
}
