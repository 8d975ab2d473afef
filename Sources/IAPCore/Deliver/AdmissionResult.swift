/// Whether a valid receipt is one this service honours.
public enum AdmissionResult: Equatable, Sendable {
    case admitted
    /// Valid, but not for us: the answer is `rejected`. The reason is for logs
    /// and names no receipt data beyond the bundle id.
    case rejected(reason: String)
}
