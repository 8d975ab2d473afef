// Why the service reads JSON with its own reader (IAPCore's JSONParser) and not Foundation's: the cost of
// reading what it reads most, measured side by side on the same bytes, in one process, in turn.
//   answer   a verifyReceipt answer of a game's app receipt: 20 in_app entries and 20 latest_receipt_info
//            entries with Apple's string-typed fields (about 27 KB), read to the transactions the delivery
//            needs: JSONParser + AppleReply.parse, against JSONDecoder into Decodable structs of the same
//            fields, and against JSONSerialization into dictionaries (fields then read by key)
//   request  a verify request body: a 6 KB base64 receipt and three short fields
// For each: µs per read, the median of 7 rounds, and its ratio to the project's reader.
//
// Usage: swift run -c release json-reader-bench [ROUNDS]
import Foundation
import IAPCore

let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 3000 : 3000

// MARK: - The inputs

func transactionJSON(_ index: Int) -> String {
    let id = 1_000_000_500_000_000 + index
    return """
        {"quantity":"1","product_id":"com.example.game.gems_\(index % 4)","transaction_id":"\(id)",\
        "original_transaction_id":"\(id)","purchase_date":"2026-11-20 08:\(10 + index):00 Etc/GMT",\
        "purchase_date_ms":"\(1_763_626_200_000 + Int64(index) * 60_000)",\
        "purchase_date_pst":"2026-11-20 00:\(10 + index):00 America/Los_Angeles",\
        "original_purchase_date":"2026-11-20 08:\(10 + index):00 Etc/GMT",\
        "original_purchase_date_ms":"\(1_763_626_200_000 + Int64(index) * 60_000)",\
        "original_purchase_date_pst":"2026-11-20 00:\(10 + index):00 America/Los_Angeles",\
        "is_trial_period":"false","in_app_ownership_type":"PURCHASED"}
        """
}

let entries = (0..<20).map(transactionJSON).joined(separator: ",")
let answer = Array("""
    {"status":0,"environment":"Production","receipt":{"receipt_type":"Production","adam_id":1234567890,\
    "app_item_id":1234567890,"bundle_id":"com.example.game","application_version":"1.3.0",\
    "download_id":88888888888,"version_external_identifier":0,"receipt_creation_date":"2026-11-20 09:00:00 Etc/GMT",\
    "receipt_creation_date_ms":"1763629200000","request_date":"2026-11-20 09:00:01 Etc/GMT",\
    "request_date_ms":"1763629201000","original_purchase_date":"2026-01-01 00:00:00 Etc/GMT",\
    "original_purchase_date_ms":"1767225600000","original_application_version":"1.0","in_app":[\(entries)]},\
    "latest_receipt_info":[\(entries)],"latest_receipt":"\(String(repeating: "TUlJ", count: 1500))"}
    """.utf8)

let request = Array("""
    {"receipt_data":"\(String(repeating: "MIIT", count: 1536))","order_id":"6f1c2a34-8d0e-4b7a-9c1f-2e3d4c5b6a79",\
    "user_id":"u-1001","app_version":"1.3.0"}
    """.utf8)

// MARK: - Foundation's side: the same fields as Decodable structs

struct DecodedTransaction: Decodable {
    let quantity: String
    let product_id: String
    let transaction_id: String
    let original_transaction_id: String
    let purchase_date_ms: String
    let cancellation_date_ms: String?
}

struct DecodedReceipt: Decodable {
    let bundle_id: String
    let in_app: [DecodedTransaction]
}

struct DecodedAnswer: Decodable {
    let status: Int
    let environment: String?
    let receipt: DecodedReceipt?
    let latest_receipt_info: [DecodedTransaction]?
}

struct DecodedRequest: Decodable {
    let receipt_data: String
    let order_id: String?
    let user_id: String?
    let app_version: String?
}

// MARK: - Measuring

/// Median µs per call of `body` over 7 rounds of `count` calls. What the calls return is summed and
/// printed, so that the optimiser cannot drop them.
func median(_ count: Int, _ body: () throws -> Int) rethrows -> Double {
    var perCall: [Double] = []
    var sink = 0
    for _ in 0..<7 {
        let start = ContinuousClock.now
        for _ in 0..<count { sink &+= try body() }
        let elapsed = ContinuousClock.now - start
        let micros = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
        perCall.append(micros / Double(count))
    }
    if sink == 42 { print("(checksum \(sink))") }
    return perCall.sorted()[3]
}

func report(_ input: String, _ figures: [(String, Double)]) {
    let base = figures[0].1
    for (name, micros) in figures {
        print("\(input) \(name): \(String(format: "%.1f", micros)) µs per read (\(String(format: "%.2f", micros / base))x)")
    }
}

let decoder = JSONDecoder()
let answerData = Data(answer)
let requestData = Data(request)

report("answer (\(answer.count) bytes)", [
    ("JSONParser + AppleReply.parse", try median(rounds) {
        let reply = try AppleReply.parse(try JSONParser.parse(answer))
        return reply.latestReceiptInfo.count + (reply.receipt?.inApp.count ?? 0)
    }),
    ("JSONDecoder (Decodable)", try median(rounds) {
        let decoded = try decoder.decode(DecodedAnswer.self, from: answerData)
        return (decoded.latest_receipt_info?.count ?? 0) + (decoded.receipt?.in_app.count ?? 0)
    }),
    ("JSONSerialization", try median(rounds) {
        let object = try JSONSerialization.jsonObject(with: answerData) as? [String: Any]
        let latest = object?["latest_receipt_info"] as? [[String: Any]] ?? []
        return latest.reduce(0) { $0 + (($1["transaction_id"] as? String)?.count ?? 0) }
    }),
])

report("request (\(request.count) bytes)", [
    ("JSONParser", try median(rounds * 4) {
        guard case .object(let object) = try JSONParser.parse(request),
            case .string(let receipt)? = object["receipt_data"]
        else { return 0 }
        return receipt.utf8.count
    }),
    ("JSONDecoder (Decodable)", try median(rounds * 4) {
        try decoder.decode(DecodedRequest.self, from: requestData).receipt_data.utf8.count
    }),
    ("JSONSerialization", try median(rounds * 4) {
        let object = try JSONSerialization.jsonObject(with: requestData) as? [String: Any]
        return (object?["receipt_data"] as? String)?.utf8.count ?? 0
    }),
])
