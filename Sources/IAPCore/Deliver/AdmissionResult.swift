/// Whether a valid receipt is one this service honours.
public enum AdmissionResult: Equatable, Sendable {
    case admitted
    /// Valid, but not for us: the answer is `rejected`. The reason is for logs
    /// and names no receipt data beyond the bundle id.
    case rejected(reason: String)
    /// A sandbox receipt under the `review` policy while the review version and
    /// the sandbox users have not been read yet: the answer is `retry_later`
    /// (rejecting it would tell the app to finish an App Review purchase).
    case settingsUnknown
}
