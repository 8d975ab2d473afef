import Glibc
import IAPCore
import Logging

/// swift-log's handler for the service: each event as one line on stderr, in
/// `Log.format`. Text: the access line as `Log.access` wrote it, any other
/// event as `iap-fcgi: message`. JSON: `time`, `level`, then `message` (an
/// event's text, or `request` for the access line) and the metadata, the
/// access fields first in a fixed order, numbers as numbers.
struct LineLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    /// The access line's fields, in the order every JSON line gives them.
    private static let fieldOrder = [
        "request_id", "method", "path", "route", "status", "duration_ms", "verify_status", "apple_status",
        "environment", "error_code",
    ]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line: [UInt8]
        switch Log.format {
        case .text:
            let message = event.message.description
            line = Array((event.source == Log.accessSource ? message : "iap-fcgi: " + message).utf8)
        case .json:
            line = jsonLine(event)
        }
        line.append(UInt8(ascii: "\n"))
        GatheredLines.current.write(line)
    }

    private func jsonLine(_ event: LogEvent) -> [UInt8] {
        var fields = metadata.merging(event.metadata ?? [:]) { _, new in new }
        var members: [(key: String, value: JSONValue)] = [
            ("time", .string(Log.iso8601(ms: SystemClock.wallMilliseconds(), milliseconds: true))),
            ("level", .string(event.level.rawValue)),
            ("message", .string("\(event.message)")),
        ]
        for key in Self.fieldOrder {
            if let value = fields.removeValue(forKey: key) {
                members.append((key, Self.json(value)))
            }
        }
        for key in fields.keys.sorted() {
            members.append((key, Self.json(fields[key]!)))
        }
        return JSONValue.object(JSONObject(members)).serialized()
    }

    /// Integers and finite doubles as JSON numbers; everything else as text.
    private static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let text):
            return .string(text)
        case .stringConvertible(let item):
            if let integer = item as? Int { return .int(integer) }
            if let number = item as? Double, number.isFinite { return .number("\(number)") }
            return .string(item.description)
        case .array(let items):
            return .array(items.map(json))
        case .dictionary(let dictionary):
            return .object(JSONObject(dictionary.keys.sorted().map { ($0, json(dictionary[$0]!)) }))
        }
    }
}
