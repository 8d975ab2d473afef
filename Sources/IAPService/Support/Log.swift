import Glibc

/// Lines to stderr, one `write` each so that threads never interleave within a
/// line. Callers pass only what may be logged: never a secret, a password or
/// receipt data.
enum Log {
    static func line(_ text: String) {
        var line = Array(text.utf8)
        line.append(UInt8(ascii: "\n"))
        line.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
    }

    static func event(_ text: String) {
        line("iap-fcgi: \(text)")
    }
}
