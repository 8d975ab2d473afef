/// The `receipt` of a verifyReceipt answer, in either of Apple's two formats.
public struct AppleReceipt: Equatable, Sendable {
    public enum Format: String, Equatable, Sendable {
        /// iOS 7+ app receipt: `bundle_id`, `application_version` and `in_app`.
        case appReceipt
        /// iOS 6 transaction receipt: one flat transaction with `bid` and `bvrs`.
        case transactionReceipt
    }

    public let format: Format
    /// `bundle_id`, or `bid` for iOS 6.
    public let bundleID: String?
    /// `application_version`, or `bvrs` for iOS 6. In the sandbox this is the
    /// build number (usually "1.0"), so it never decides the sandbox policy.
    public let applicationVersion: String?
    /// `app_item_id`, or `item_id` for iOS 6, exactly as Apple sent it (a string
    /// or a number; absent in the sandbox).
    public let appItemID: JSONValue?
    /// Every entry of `in_app`; for iOS 6 the flat receipt as its one transaction.
    public let inApp: [AppleTransaction]
    /// The object as Apple sent it.
    public let raw: JSONObject

    public init(
        format: Format, bundleID: String?, applicationVersion: String?, appItemID: JSONValue?,
        inApp: [AppleTransaction], raw: JSONObject = JSONObject()
    ) {
        self.format = format
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.appItemID = appItemID
        self.inApp = inApp
        self.raw = raw
    }

    /// Reads a `receipt` object: an app receipt when it has `in_app`, else an
    /// iOS 6 transaction receipt.
    public static func parse(_ object: JSONObject) throws(AppleReplyError) -> AppleReceipt {
        guard let inAppValue = object["in_app"] else {
            let transaction: AppleTransaction
            do throws(AppleReplyError) {
                transaction = try AppleTransaction.parse(object)
            } catch {
                throw error.nested(in: "receipt")
            }
            return AppleReceipt(
                format: .transactionReceipt, bundleID: AppleScalar.text(object["bid"]),
                applicationVersion: AppleScalar.text(object["bvrs"]), appItemID: object["item_id"],
                inApp: [transaction], raw: object)
        }
        let entries: [JSONValue]
        switch inAppValue {
        case .array(let array): entries = array
        case .null: entries = []
        default: throw AppleReplyError(.invalidField, field: "receipt.in_app")
        }
        return AppleReceipt(
            format: .appReceipt, bundleID: AppleScalar.text(object["bundle_id"]),
            applicationVersion: AppleScalar.text(object["application_version"]),
            appItemID: object["app_item_id"],
            inApp: try AppleTransaction.parseList(entries, at: "receipt.in_app"), raw: object)
    }
}
