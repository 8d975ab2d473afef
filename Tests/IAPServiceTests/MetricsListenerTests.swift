@testable import IAPService
import XCTest

/// The metrics listener's wait ends when the service stops: `wakeUp` ends the poll at once, and
/// only once (the wake-up is taken, so the next wait lasts as long as it is asked to).
final class MetricsListenerTests: XCTestCase {
    func testAWakeUpEndsTheWaitAtOnceAndIsTakenByIt() throws {
        let listener = try MetricsListener.open(host: "127.0.0.1", port: 0)
        defer { listener.closeAll([]) }
        var connections: [MetricsListener.Connection] = []
        listener.wakeUp()
        let woken = ContinuousClock.now
        listener.serve(&connections, waitingAtMostMs: 60_000) { [] }
        XCTAssertLessThan(ContinuousClock.now - woken, .seconds(5), "the wait of 60 s ended on the wake-up")
        let next = ContinuousClock.now
        listener.serve(&connections, waitingAtMostMs: 200) { [] }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - next, .milliseconds(150), "the wake-up was taken")
        XCTAssertTrue(connections.isEmpty)
    }
}
