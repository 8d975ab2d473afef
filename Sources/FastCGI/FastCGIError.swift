/// A libfcgi call that failed, with the C function's name and its return code.
public struct FastCGIError: Error, CustomStringConvertible, Sendable {
    public let function: String
    public let code: Int32

    public var description: String {
        "\(function) failed with \(code)"
    }
}
