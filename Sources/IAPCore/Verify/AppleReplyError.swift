/// Why an answer of verifyReceipt could not be read. The service treats it like
/// an unreadable body: a passing fault, retried, never a crash. Descriptions name
/// fields only, never their values (they come from a receipt).
public struct AppleReplyError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// The answer is not a JSON object.
        case notAnObject
        /// A field the answer cannot do without is absent.
        case missingField
        /// A field has a type or a value that cannot be read.
        case invalidField
    }

    public let kind: Kind
    /// Where the field is, e.g. `receipt.in_app[2].transaction_id`.
    public let field: String

    public init(_ kind: Kind, field: String) {
        self.kind = kind
        self.field = field
    }

    public static let notAnObject = AppleReplyError(.notAnObject, field: "")

    public var description: String {
        switch kind {
        case .notAnObject: return "Apple's answer is not a JSON object"
        case .missingField: return "Apple's answer has no \(field)"
        case .invalidField: return "Apple's answer has an unreadable \(field)"
        }
    }

    /// The same error, for a field found inside `parent`.
    func nested(in parent: String) -> AppleReplyError {
        AppleReplyError(kind, field: field.isEmpty ? parent : "\(parent).\(field)")
    }
}
