/// A transaction id as Apple issues them: 1 to 64 decimal digits (64: the width of
/// `transactions.transaction_id`). Only such an id goes into the path of a call to the App Store
/// Server API, so that nothing else in it (a slash, `..`, a `?`) can change which URL is called.
public enum AppleTransactionID {
    public static func isValid(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
