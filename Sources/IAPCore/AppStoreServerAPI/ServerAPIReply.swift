/// Reads the Server API's 200 answers; nil for a body that is not what Apple documents.
public enum ServerAPIReply {
    /// Get Transaction Info: `{"signedTransactionInfo": "<JWS>"}`.
    public static func signedTransactionInfo(_ body: [UInt8]) -> String? {
        guard case .string(let jws)? = (try? JSONParser.parse(body))?.objectValue?["signedTransactionInfo"] else {
            return nil
        }
        return jws
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
