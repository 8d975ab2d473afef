import IAPCore
internal import SignedData

extension TrustedRoots {
    /// The roots of the PEM file `path` (a variable's value), or `fallback`
    /// when it is unset. A file that cannot be read or holds no certificate
    /// stops the start, naming `variable`.
    static func configured(
        file path: String?, variable: String, fallback: TrustedRoots
    ) throws(ConfigurationError) -> TrustedRoots {
        guard let path else { return fallback }
        do {
            return try TrustedRoots(pemFile: path)
        } catch {
            throw ConfigurationError(variable: variable, problem: "\(path) is not a readable PEM of certificates (\(error))")
        }
    }
}
