import Synchronization

/// A value that several objects or closures share by reference, under a `Mutex`: what a call's
/// completion, run on another thread, fills in for the thread waiting on it. A class's own state
/// holds a `Mutex` as a stored property instead.
final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) {
        mutex = Mutex(value)
    }

    func withLock<Result>(_ body: (inout sending Value) throws -> sending Result) rethrows -> sending Result {
        try mutex.withLock(body)
    }
}
