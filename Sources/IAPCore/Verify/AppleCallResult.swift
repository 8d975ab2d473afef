/// What came back from one call to verifyReceipt.
public enum AppleCallResult: Equatable, Sendable {
    /// Apple's server answered with an HTTP status and a body (not yet read).
    case answered(httpStatus: Int, body: [UInt8])
    /// No answer arrived.
    case transportFailure(TransportFailure)

    public enum TransportFailure: String, Equatable, Sendable {
        /// The connect or the total timeout passed.
        case timeout
        /// The connection could not be made or broke (DNS, refused, reset).
        case connection
        /// The TLS handshake or the certificate check failed.
        case tls
    }
}
