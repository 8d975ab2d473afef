/// A bad environment variable, found at start-up. The description names the
/// variable and what is wrong with it, e.g.
/// `IAP_APPLE_TIMEOUT_MS: must be a whole number of milliseconds from 100 to 120000 (got "abc")`.
/// The value of a secret variable is never part of it.
public struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The environment variable, e.g. `IAP_APPLE_TIMEOUT_MS`.
    public let variable: String
    /// What is wrong, for an operator.
    public let problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    /// The variables whose values must not appear in errors or logs.
    public static let secretVariables: Set<String> = ["IAP_DB_PASSWORD", "IAP_SHARED_SECRET", "IAP_WEBHOOK_SECRET"]

    /// An error quoting the offending value, unless the variable is secret.
    static func invalid(_ variable: String, _ rule: String, got value: String) -> ConfigurationError {
        let quoted = secretVariables.contains(variable) ? "" : " (got \(String(reflecting: value)))"
        return ConfigurationError(variable: variable, problem: rule + quoted)
    }

    public var description: String { "\(variable): \(problem)" }
}
