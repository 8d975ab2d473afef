@testable import IAPService
import Curl
import IAPCore
import XCTest

/// The one driver of every call to a store, without the network: what `AppleClient` sees of a
/// `CallConversation`, and what its `CallExchange` is handed.
final class CallConversationTests: XCTestCase {
    /// Records what the driver hands it; reads Google's token answers as stored.
    private final class Recorder: CallExchange {
        typealias Sequence = GoogleCallSequence
        var read: [GoogleCallTarget] = []
        var noted: [GoogleCallTarget] = []
        var completed: [(GoogleCallVerdict, Bool)] = []
        var admittedBytes: Int { 42 }
        var endpointLabel: String { "google_play" }

        func environment(of target: GoogleCallTarget) -> AppleEnvironment { target == .token ? .sandbox : .production }

        func prepare(_ transfer: CurlTransfer, for target: GoogleCallTarget, timeoutMs: Int) throws(CurlError) {}

        func read(_ result: AppleCallResult, retryAfter: Int64?, from target: GoogleCallTarget) -> GoogleCallSequence.Result {
            read.append(target)
            switch result {
            case .answered(let status, let body): return .answered(httpStatus: status, body: body, retryAfterSeconds: retryAfter)
            case .transportFailure(let failure): return .transportFailure(failure)
            }
        }

        func noteResult(_ result: AppleCallResult, from target: GoogleCallTarget, sequence: GoogleCallSequence) {
            noted.append(target)
        }

        func complete(_ verdict: GoogleCallVerdict, sequence: GoogleCallSequence, stoppedByDeadline: Bool) {
            completed.append((verdict, stoppedByDeadline))
        }
    }

    private func conversation(_ exchange: Recorder) -> CallConversation<Recorder> {
        CallConversation(
            GoogleCallSequence(policy: AppleRetryPolicy(budgetMs: 8000), hasToken: { false }, jitter: { 1 }),
            exchange: exchange, deadline: .never)
    }

    func testEachCallGoesToItsTargetsEnvironmentAndTheVerdictToTheExchange() {
        let exchange = Recorder()
        let call = conversation(exchange)
        XCTAssertEqual(call.admittedBytes, 42)
        XCTAssertEqual(call.endpointLabel, "google_play")
        XCTAssertEqual(call.start(atMs: 0), .call(.sandbox, afterMs: 0))
        XCTAssertEqual(call.timeLeftMs(atMs: 1000), 7000)
        XCTAssertEqual(call.next(after: .answered(httpStatus: 200, body: []), retryAfterUnixMs: nil, atMs: 10), .call(.production, afterMs: 0))
        XCTAssertEqual(
            call.next(after: .answered(httpStatus: 200, body: [1]), retryAfterUnixMs: nil, atMs: 20), .finished)
        XCTAssertEqual(exchange.read, [.token, .api])
        XCTAssertEqual(exchange.noted, [.token, .api])
        XCTAssertTrue(exchange.completed.isEmpty)
        call.complete()
        XCTAssertEqual(exchange.completed.map(\.0), [.answered(httpStatus: 200, body: [1])])
        XCTAssertEqual(exchange.completed.map(\.1), [false])
    }

    func testADeadlineStopEndsWithTheSequencesStoppedVerdict() {
        let exchange = Recorder()
        let call = conversation(exchange)
        _ = call.start(atMs: 0)
        XCTAssertEqual(call.next(after: .transportFailure(.connection), retryAfterUnixMs: nil, atMs: 5), .call(.sandbox, afterMs: 1000))
        call.stopByDeadline()
        call.complete()
        XCTAssertEqual(exchange.completed.map(\.0), [.unavailable])
        XCTAssertEqual(exchange.completed.map(\.1), [true])
    }
}
