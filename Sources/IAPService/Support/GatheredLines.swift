import Glibc

/// Log lines held back on one thread and written to stderr in one `write`.
///
/// The delivery thread answers a batch of verifications at a time, each with
/// its access line: one `write` per line was a third of that thread's system
/// calls (strace, bench case e1). Inside `Log.gathered { … }` the thread's
/// lines are appended here and written together when the block ends; every
/// other thread, and this one outside such a block, writes each line at once.
/// Whole lines only, in one write: lines of different threads never mix.
final class GatheredLines {
    private var bytes: [UInt8] = []
    private var depth = 0

    /// This thread's gatherer, made on first use and kept for the thread's life.
    static var current: GatheredLines {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<GatheredLines>.fromOpaque(existing).takeUnretainedValue()
        }
        let made = GatheredLines()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key) { gatherer in
            guard let gatherer else { return }
            Unmanaged<GatheredLines>.fromOpaque(gatherer).release()
        }
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    /// Runs `body` with this thread's lines held back, then writes them.
    func gathering<Result>(_ body: () throws -> Result) rethrows -> Result {
        depth += 1
        defer {
            depth -= 1
            if depth == 0 { flush() }
        }
        return try body()
    }

    /// Holds `line` (ending in a newline) while gathering; otherwise writes it now.
    func write(_ line: [UInt8]) {
        guard depth > 0 else { return Self.writeToStderr(line) }
        bytes.append(contentsOf: line)
    }

    private func flush() {
        guard !bytes.isEmpty else { return }
        Self.writeToStderr(bytes)
        bytes.removeAll(keepingCapacity: bytes.count <= 64 << 10)
    }

    private static func writeToStderr(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
