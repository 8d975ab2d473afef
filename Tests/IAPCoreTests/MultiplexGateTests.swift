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
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection, "a holds 3: the next call opens b")
        XCTAssertNil(gate.admit(freshConnection: false), "nothing starts while b opens")
        gate.requestBegan(.opensConnection, on: "b", multiplexed: true)
        XCTAssertEqual(gate.busyConnections, 2)
        XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection)
    }

    func testCallsNotYetOnAConnectionCountAgainstItsRoom() {
        var gate = MultiplexGate(streamsPerConnection: 2)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        XCTAssertEqual(gate.admit(freshConnection: false), .sharesConnection)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection)
        gate.ended(.opensConnection, on: nil)  // it failed before its request began
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection, "the shared call still holds a's room")
    }

    func testAnEndedCallFreesItsStream() {
        var gate = MultiplexGate(streamsPerConnection: 1)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection)
        gate.requestBegan(.opensConnection, on: "b", multiplexed: true)
        gate.ended(.opensConnection, on: "a")
        XCTAssertEqual(gate.busyConnections, 1, "an idle connection no longer counts")
        XCTAssertEqual(gate.admit(freshConnection: false), .opensConnection, "b is full, a idle: the call finds a itself")
    }

    func testACallThatMustOpenItsOwnConnectionWaitsForNoRoom() {
        var gate = MultiplexGate(streamsPerConnection: 5)
        gate.requestBegan(gate.admit(freshConnection: false)!, on: "a", multiplexed: true)
        XCTAssertEqual(gate.admit(freshConnection: true), .opensConnection)
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
}
