// Linked with the IAPCore module scripts/fuzz compiles with coverage (testable: internal types too).
@testable import IAPCore

/// Apple's answers: parsed, read as a verify answer, written and read again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppleAnswers(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var sequence = AppleCallSequence()
    _ = sequence.start(atMs: 0)
    _ = sequence.next(after: .answered(httpStatus: 200, body: bytes), atMs: 1)
    guard let json = try? JSONParser.parse(bytes) else { return 0 }
    // Whatever parses must serialise to JSON that parses to the same value.
    let written = json.serialized()
    precondition((try? JSONParser.parse(written)) == json, "JSON does not round-trip")
    guard let reply = try? AppleReply.parse(json) else { return 0 }
    let transactions = ReceiptTransactions(reply: reply, namedTransactionID: reply.receipt?.inApp.last?.transactionID)
    precondition(transactions.namedTransactionPresent, "the named transaction was lost")
    precondition(Set(transactions.transactions.map(\.transactionID)).count == transactions.transactions.count,
                 "a transaction is listed twice")
    let answer = VerifyAnswer(
        status: .delivered, environment: .production, appleStatus: reply.status, app: reply.receipt,
        transactions: transactions.transactions.map { TransactionAnswer(transaction: $0, state: .delivered, orderID: nil) })
    precondition((try? JSONParser.parse(answer.json().serialized())) != nil, "an answer is not valid JSON")
    return 0
}
