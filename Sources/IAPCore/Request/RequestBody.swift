/// The members of a request body, read the way the contract says: the body must
/// be a JSON object; `null` counts as absent; unknown keys are ignored.
struct RequestBody {
    let object: JSONObject

    /// Parses `body`; anything but a JSON object is 400 `invalid_json`.
    init(_ body: [UInt8]) throws(APIError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw APIError.invalidJSON("request body is not valid JSON: \(error.message)")
        }
        guard let object = value.objectValue else {
            throw APIError.invalidJSON("request body must be a JSON object")
        }
        self.object = object
    }

    /// The member `name`, or nil when it is absent or `null`.
    subscript(name: String) -> JSONValue? {
        guard let value = object[name], !value.isNull else { return nil }
        return value
    }

    /// A required member that must be a string passing `isValid`.
    func requiredString(
        _ name: String, _ rule: String, where isValid: (String) -> Bool
    ) throws(APIError) -> String {
        guard let value = self[name] else { throw APIError.missingField(name) }
        return try Self.string(value, name, rule, where: isValid)
    }

    /// An optional member that, when present, must be a string passing `isValid`.
    func optionalString(
        _ name: String, _ rule: String, where isValid: (String) -> Bool
    ) throws(APIError) -> String? {
        guard let value = self[name] else { return nil }
        return try Self.string(value, name, rule, where: isValid)
    }

    private static func string(
        _ value: JSONValue, _ name: String, _ rule: String, where isValid: (String) -> Bool
    ) throws(APIError) -> String {
        guard let text = value.stringValue, isValid(text) else {
            throw APIError.invalidField(name, rule)
        }
        return text
    }
}

extension String {
    /// True when the text has 1...`maxScalars` Unicode scalars and none is a
    /// control character (general category Cc). Everything else, non-ASCII
    /// and SQL metacharacters included, is allowed: values go to the database
    /// as bound parameters, never as SQL text.
    func isPlainText(maxScalars: Int) -> Bool {
        // ASCII (user ids nearly always): its control characters are 0x00-0x1F and 0x7F.
        if utf8.allSatisfy({ $0 < 0x80 }) {
            return (1...maxScalars).contains(utf8.count) && utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
        }
        var count = 0
        for scalar in unicodeScalars {
            count += 1
            if count > maxScalars || scalar.properties.generalCategory == .control { return false }
        }
        return count > 0
    }
}
