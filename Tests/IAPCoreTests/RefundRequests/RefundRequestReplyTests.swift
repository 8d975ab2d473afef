import IAPCore
import XCTest

final class RefundRequestReplyTests: XCTestCase {
    private func reply(_ body: String, type: GameEventType = .refundRequested, delivered: Bool = true) -> RefundRequestReply {
        RefundRequestReply(eventType: type, delivered: delivered, body: Array(body.utf8))
    }

    func testAGamesTwoHundredToARefundRequestCarriesItsConsumption() {
        XCTAssertEqual(reply(#"{"consumption_percentage": 25000}"#).consumedMilli, 25000)
        XCTAssertNil(reply(#"{"consumption_percentage": 25000}"#).unheard)
    }

    func testOnlyADeliveredRefundRequestIsRead() {
        for type in GameEventType.allCases where type != .refundRequested {
            XCTAssertNil(reply(#"{"consumption_percentage": 1}"#, type: type).consumedMilli, type.rawValue)
            XCTAssertNil(reply("<html>", type: type).unheard, type.rawValue)
        }
        let failed = reply(#"{"consumption_percentage": 1}"#, delivered: false)
        XCTAssertNil(failed.consumedMilli)
        XCTAssertNil(failed.unheard, "a failed POST is retried, not logged as unheard")
    }

    func testAnAnswerWithoutAUsableConsumptionSaysWhy() {
        XCTAssertEqual(reply("").unheard, "the game answered no consumption_percentage")
        XCTAssertEqual(reply("{}").unheard, "the game answered no consumption_percentage")
        XCTAssertEqual(
            reply(#"{"consumption_percentage": 100001}"#).unheard,
            "the game's answer is ignored: consumption_percentage is not an integer from 0 to 100000")
        XCTAssertEqual(reply("<html>secret</html>").unheard, "the game's answer is ignored: the body is not a JSON object")
        XCTAssertNil(reply("<html>").consumedMilli)
    }
}
