/// Reads the Server API's 200 answers; nil for a body that is not what Apple documents.
public enum ServerAPIReply {
    /// Get Transaction Info: `{"signedTransactionInfo": "<JWS>"}`.
    public static func signedTransactionInfo(_ body: [UInt8]) -> String? {
        guard case .string(let jws)? = (try? JSONParser.parse(body))?.objectValue?["signedTransactionInfo"] else {
            return nil
        }
        return jws
    }

    /// One page of Get Notification History: `{"notificationHistory": [{"signedPayload", ...}], "hasMore",
    /// "paginationToken"}`; `nextPage` is the token of the next page, nil on the last one.
    public static func notificationHistory(_ body: [UInt8]) -> (signedPayloads: [String], nextPage: String?)? {
        guard let json = (try? JSONParser.parse(body))?.objectValue,
              case .array(let items)? = json["notificationHistory"]
        else { return nil }
        var payloads: [String] = []
        for item in items {
            guard case .string(let jws)? = item.objectValue?["signedPayload"] else { return nil }
            payloads.append(jws)
        }
        guard case .bool(true)? = json["hasMore"] else { return (payloads, nil) }
        guard case .string(let token)? = json["paginationToken"], !token.isEmpty else { return nil }
        return (payloads, token)
    }

    /// Look Up Order ID: `{"status": 0|1, "signedTransactions": [...]}`; status 1
    /// (an order id Apple does not know) is an empty list with `known` false.
    public static func orderLookup(_ body: [UInt8]) -> (known: Bool, signedTransactions: [String])? {
        guard let json = (try? JSONParser.parse(body))?.objectValue, case .number(let status)? = json["status"] else {
            return nil
        }
        switch status {
        case "0":
            guard case .array(let items)? = json["signedTransactions"] else { return (true, []) }
            var jwsList: [String] = []
            for item in items {
                guard case .string(let jws) = item else { return nil }
                jwsList.append(jws)
            }
            return (true, jwsList)
        case "1":
            return (false, [])
        default:
            return nil
        }
    }
}
