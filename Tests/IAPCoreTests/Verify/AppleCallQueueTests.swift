import IAPCore
import XCTest

final class AppleCallQueueTests: XCTestCase {
    private typealias Queue = AppleCallQueue<String>
    private let ms: UInt64 = 1_000_000
    private let now: UInt64 = 100_000 * 1_000_000
    private let origin = "https://buy.itunes.apple.com:443"

    private func queue(maxCalls: Int) -> Queue {
        Queue(maxCalls: maxCalls, appleTimeoutMs: 2000, streamsPerConnection: 100, connectionsOpeningAtOnce: 1)
    }

    /// Hands `call` over and takes it to a transfer in libcurl or held by its gate, as the client would.
    private func startedCall(_ call: String, in queue: inout Queue, deadline: Deadline = .never) -> [Queue.Action] {
        XCTAssertEqual(queue.submitted(call, deadline: deadline), [.startConversation(call)])
        XCTAssertEqual(
            queue.callsAgain(call, afterMs: 0, nowNs: now), [.prepare(call, deadlineTimeoutMs: 2000, freshConnection: false)])
        return queue.prepared(call, origin: origin)
    }

    func testTheFirstCallToAnOriginOpensItsConnectionAloneAndTheNextIsHeld() {
        var queue = queue(maxCalls: 8)
        XCTAssertEqual(startedCall("a", in: &queue), [.add("a", .opensConnection)])
        XCTAssertEqual(startedCall("b", in: &queue), [], "held until a's request tells whether the server multiplexes")
        XCTAssertEqual(queue.underWayCount, 1)
        XCTAssertEqual(queue.heldCount, 1)
    }

    func testHeldCallsStartOnTheConnectionOnceItsFirstRequestBeganMultiplexed() {
        var queue = queue(maxCalls: 8)
        _ = startedCall("a", in: &queue)
        _ = startedCall("b", in: &queue)
        _ = startedCall("c", in: &queue)
        XCTAssertEqual(queue.startWaiting(nowNs: now), [], "no request began yet")
        queue.requestBegan("a", on: "conn-1", multiplexed: true)
        XCTAssertEqual(
            queue.startWaiting(nowNs: now),
            [.addHeld("b", .sharesConnection, deadlineTimeoutMs: 2000), .addHeld("c", .sharesConnection, deadlineTimeoutMs: 2000)])
        XCTAssertEqual(queue.heldCount, 0)
        XCTAssertEqual(queue.underWayCount, 3)
    }

    func testAServerThatDoesNotMultiplexGetsACallPerConnection() {
        var queue = queue(maxCalls: 8)
        _ = startedCall("a", in: &queue)
        queue.requestBegan("a", on: "conn-1", multiplexed: false)
        XCTAssertEqual(startedCall("b", in: &queue), [.add("b", .unrestricted)])
    }

    func testCallsBeyondMaxCallsQueueCountingThoseHeld() {
        var queue = queue(maxCalls: 2)
        _ = startedCall("a", in: &queue)
        _ = startedCall("b", in: &queue)
        XCTAssertEqual(queue.submitted("c", deadline: .never), [], "one under way and one held fill the two")
        XCTAssertEqual(queue.queuedCount, 1)
    }

    func testACallWhoseConversationIsStartingKeepsItsTurn() {
        var queue = queue(maxCalls: 1)
        XCTAssertEqual(queue.submitted("a", deadline: .never), [.startConversation("a")])
        XCTAssertEqual(queue.submitted("b", deadline: .never), [], "a has not reported back, but holds the one turn")
        XCTAssertEqual(
            queue.callsAgain("a", afterMs: 0, nowNs: now), [.prepare("a", deadlineTimeoutMs: 2000, freshConnection: false)],
            "its own turn is not taken from it")
    }

    func testQueuedCallsStartFirstComeFirstServedAsTurnsFreeUp() {
        var queue = queue(maxCalls: 1)
        _ = startedCall("a", in: &queue)
        _ = queue.submitted("b", deadline: .never)
        _ = queue.submitted("c", deadline: .never)
        XCTAssertEqual(queue.startWaiting(nowNs: now), [])
        queue.finished("a", answered: true)
        queue.ended("a")
        XCTAssertEqual(queue.startWaiting(nowNs: now), [.startConversation("b")])
        XCTAssertEqual(queue.queuedCount, 1)
    }

    func testARetryWithoutATurnQueuesBehindThoseBeforeAndThenTakesATransfer() {
        var queue = queue(maxCalls: 1)
        _ = startedCall("a", in: &queue)
        _ = queue.submitted("b", deadline: .never)
        queue.finished("a", answered: true)
        XCTAssertEqual(queue.callsAgain("a", afterMs: 200, nowNs: now), [], "a backs off")
        XCTAssertEqual(queue.startWaiting(nowNs: now), [.startConversation("b")], "b takes the free turn")
        _ = queue.callsAgain("b", afterMs: 0, nowNs: now)
        XCTAssertEqual(queue.prepared("b", origin: origin), [.add("b", .opensConnection)])
        XCTAssertEqual(queue.tick(nowNs: now + 200 * ms), [], "a's backoff is over, but b holds the turn")
        XCTAssertEqual(queue.queuedCount, 1)
        queue.finished("b", answered: true)
        queue.ended("b")
        XCTAssertEqual(
            queue.startWaiting(nowNs: now + 200 * ms), [.prepare("a", deadlineTimeoutMs: 2000, freshConnection: false)],
            "its conversation started already: a transfer, not a new start")
    }

    func testACallAfterOneThatGotNoAnswerGoesOnANewConnection() {
        var queue = queue(maxCalls: 8)
        _ = startedCall("a", in: &queue)
        queue.finished("a", answered: false)
        XCTAssertEqual(queue.callsAgain("a", afterMs: 0, nowNs: now), [.prepare("a", deadlineTimeoutMs: 2000, freshConnection: true)])
        _ = queue.prepared("a", origin: origin)
        queue.finished("a", answered: true)
        XCTAssertEqual(queue.callsAgain("a", afterMs: 0, nowNs: now), [.prepare("a", deadlineTimeoutMs: 2000, freshConnection: false)])
    }

    func testATransferLibcurlRefusedFreesItsGateAndItsTurn() {
        var queue = queue(maxCalls: 1)
        _ = startedCall("a", in: &queue)
        queue.notStarted("a")
        XCTAssertEqual(queue.underWayCount, 0)
        XCTAssertEqual(queue.submitted("b", deadline: .never), [.startConversation("b")])
        _ = queue.callsAgain("b", afterMs: 0, nowNs: now)
        XCTAssertEqual(queue.prepared("b", origin: origin), [.add("b", .opensConnection)], "not held behind a's opening")
    }

    func testABackoffEndsBeforeTheTransferStartsAndTheThreadSleepsUntilThen() {
        var queue = queue(maxCalls: 8)
        _ = queue.submitted("a", deadline: .never)
        XCTAssertEqual(queue.callsAgain("a", afterMs: 500, nowNs: now), [])
        XCTAssertEqual(queue.sleepMs(nowNs: now), 501)
        XCTAssertEqual(queue.tick(nowNs: now + 499 * ms), [])
        XCTAssertEqual(queue.tick(nowNs: now + 500 * ms), [.prepare("a", deadlineTimeoutMs: 2000, freshConnection: false)])
    }

    func testARetryWhoseBackoffWouldEndTooCloseToTheDeadlineEndsNow() {
        var queue = queue(maxCalls: 8)
        _ = queue.submitted("a", deadline: Deadline(atNs: now + 1200 * ms))
        XCTAssertEqual(
            queue.callsAgain("a", afterMs: 300, nowNs: now), [.endByDeadline("a")],
            "900 ms would be left, less than the shortest call (1 s)")
        XCTAssertEqual(
            queue.callsAgain("a", afterMs: 0, nowNs: now), [.prepare("a", deadlineTimeoutMs: 1200, freshConnection: false)],
            "a call now gets what is left")
    }

    func testAQueuedCallEndsWhenItsDeadlineComesNotWhenATurnFreesUp() {
        var queue = queue(maxCalls: 1)
        _ = startedCall("a", in: &queue)
        _ = queue.submitted("b", deadline: Deadline(atNs: now + 1500 * ms))
        XCTAssertEqual(queue.sleepMs(nowNs: now), 501, "until b's last moment to start")
        XCTAssertEqual(queue.tick(nowNs: now + 500 * ms), [])
        XCTAssertEqual(queue.tick(nowNs: now + 501 * ms), [.endByDeadline("b")])
        XCTAssertEqual(queue.queuedCount, 0)
    }

    func testAHeldCallEndsWhenItsDeadlineComes() {
        var queue = queue(maxCalls: 8)
        _ = startedCall("a", in: &queue)
        XCTAssertEqual(startedCall("b", in: &queue, deadline: Deadline(atNs: now + 2000 * ms)), [])
        XCTAssertEqual(queue.sleepMs(nowNs: now), 1000)
        XCTAssertEqual(queue.tick(nowNs: now + 1001 * ms), [.endByDeadline("b")])
        XCTAssertEqual(queue.heldCount, 0)
    }

    func testAHeldCallAdmittedPastItsDeadlineEndsAndTheNextStarts() {
        var queue = queue(maxCalls: 8)
        _ = startedCall("a", in: &queue)
        _ = startedCall("b", in: &queue, deadline: Deadline(atNs: now + 2000 * ms))
        _ = startedCall("c", in: &queue)
        queue.finished("a", answered: false)
        XCTAssertEqual(
            queue.startWaiting(nowNs: now + 1500 * ms),
            [.endByDeadline("b"), .addHeld("c", .opensConnection, deadlineTimeoutMs: 2000)],
            "b's admission is given back to the gate, which then admits c")
    }

    func testTheThreadDoesNotSleepWhileAQueuedCallCanStart() {
        var queue = queue(maxCalls: 1)
        _ = startedCall("a", in: &queue)
        _ = queue.submitted("b", deadline: .never)
        XCTAssertEqual(queue.sleepMs(nowNs: now), 1000)
        queue.finished("a", answered: true)
        XCTAssertEqual(queue.sleepMs(nowNs: now), 0)
    }

    func testAfterTheStopEveryCallGoesOnToItsEnd() {
        var queue = queue(maxCalls: 1)
        _ = startedCall("a", in: &queue)
        _ = queue.submitted("b", deadline: .never)
        queue.stop()
        XCTAssertFalse(queue.mayEnd)
        queue.finished("a", answered: true)
        queue.ended("a")
        XCTAssertEqual(queue.startWaiting(nowNs: now), [.startConversation("b")], "a queued call still starts")
        XCTAssertFalse(queue.mayEnd)
        queue.ended("b")
        XCTAssertTrue(queue.mayEnd)
    }

    func testAnIdleQueueMayEndOnlyOnceStopped() {
        var queue = queue(maxCalls: 1)
        XCTAssertFalse(queue.mayEnd)
        queue.stop()
        XCTAssertTrue(queue.mayEnd)
    }
}
