import XCTest

@testable import IAPCore

final class MultiplexGateTests: XCTestCase {
    func testOnlyOneCallGoesUntilTheServerIsKnown() {
        var gate = MultiplexGate(streamsPerConnection: 3)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection)
        XCTAssertNil(gate.admit(freshConnection: false), "a second connection would open beside the first")
        XCTAssertEqual(gate.serverProtocol, .unknown)
    }

    func testAMultiplexingConnectionTakesUpToItsStreamsThenOneMoreOpens() {
        var gate = MultiplexGate(streamsPerConnection: 3)
        let opener = gate.admit(freshConnection: false)!
        gate.requestBegan(opener, on: "a", multiplexed: true)
        XCTAssertEqual(gate.serverProtocol, .multiplexing)
        XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection)
        XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensNewConnection, "a holds 3: the next call opens b")
        XCTAssertNil(gate.admit(freshConnection: false), "nothing starts while b opens")
        gate.requestBegan(.opensNewConnection, on: "b", multiplexed: true)
        XCTAssertEqual(gate.busyConnections, 2)
        XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection)
    }

    func testCallsNotYetOnAConnectionCountAgainstItsRoom() {
        var gate = MultiplexGate(streamsPerConnection: 2)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensNewConnection)
        gate.ended(.opensNewConnection, on: nil)  // it failed before its request began
        XCTAssertEqual(gate.admit(freshConnection: false), .opensNewConnection, "the shared call still holds a's room")
    }

    func testAnEndedCallFreesItsStream() {
        var gate = MultiplexGate(streamsPerConnection: 1)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensNewConnection)
        gate.requestBegan(.opensNewConnection, on: "b", multiplexed: true)
        gate.ended(.opensConnection, on: "a")
        XCTAssertEqual(gate.busyConnections, 1, "an idle connection no longer counts")
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection, "b is full, a idle: the call finds a itself")
        XCTAssertNil(gate.admit(freshConnection: true), "nothing opens beside a call that may pick any connection")
    }

    func testACallThatMustOpenItsOwnConnectionWaitsForNoRoom() {
        var gate = MultiplexGate(streamsPerConnection: 5)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        XCTAssertEqual(gate.admit(freshConnection: true), .opensNewConnection)
        XCTAssertNil(gate.admit(freshConnection: false), "a has room, but a connection is opening")
    }

    func testAFailedFirstCallLetsTheNextTry() {
        var gate = MultiplexGate(streamsPerConnection: 5)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection)
        gate.ended(.opensConnection, on: nil)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection)
        XCTAssertEqual(gate.serverProtocol, .unknown)
    }

    func testAServerWithoutHTTP2GetsEveryCallAtOnce() {
        var gate = MultiplexGate(streamsPerConnection: 5)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: false)
        XCTAssertEqual(gate.serverProtocol, .oneCallPerConnection)
        for _ in 0..<10 {
            XCTAssertEqual(gate.admit(freshConnection: false), .unrestricted)
        }
        XCTAssertEqual(gate.busyConnections, 0)
    }

    func testManyCallsWaitingOpenConnectionsSideBySide() {
        var gate = MultiplexGate(streamsPerConnection: 10, maxConnectionsOpening: 3)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        for _ in 0..<9 { XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection) }
        XCTAssertEqual(gate.admit(freshConnection: false, callsWaiting: 100), .opensNewConnection)
        XCTAssertEqual(gate.admit(freshConnection: false, callsWaiting: 99), .opensNewConnection)
        XCTAssertEqual(gate.admit(freshConnection: false, callsWaiting: 98), .opensNewConnection)
        XCTAssertNil(gate.admit(freshConnection: false, callsWaiting: 97), "at most 3 open at once")
        XCTAssertNil(gate.admit(freshConnection: false, callsWaiting: 5), "a few calls waiting need one connection")
    }

    func testAClosedConnectionIsNoLongerReused() {
        var gate = MultiplexGate(streamsPerConnection: 1)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        gate.ended(.opensConnection, on: "a")
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection, "a is idle: it may be reused")
        gate.requestBegan(.opensConnection, on: "a", multiplexed: true)
        gate.ended(.opensConnection, on: "a")
        gate.closed("a")
        XCTAssertEqual(gate.admit(freshConnection: false), .opensNewConnection)
    }

    func testAServerThatTakesHTTP2AgainIsLearntAnew() {
        var gate = MultiplexGate(streamsPerConnection: 5)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: false)
        XCTAssertEqual(gate.admit(freshConnection: false), .unrestricted)
        gate.requestBegan(.unrestricted, on: "b", multiplexed: true)
        XCTAssertEqual(gate.serverProtocol, .unknown)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection)
        XCTAssertNil(gate.admit(freshConnection: false))
    }
}
