extension DatabaseConfiguration {
    /// Reads `IAP_DB_HOST`, `IAP_DB_PORT`, `IAP_DB_SOCKET`, `IAP_DB_USER`,
    /// `IAP_DB_PASSWORD` and `IAP_DB_NAME` (iap-fcgi and iapctl share them).
    /// Empty values count as unset.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> DatabaseConfiguration {
        func value(_ name: String) -> String? {
            guard let text = env[name], !text.isEmpty else { return nil }
            return text
        }
        var port = 3306
        if let text = value("IAP_DB_PORT") {
            guard let number = Int(text), (1...65535).contains(number) else {
                throw ConfigurationError(
                    variable: "IAP_DB_PORT", problem: "must be a TCP port from 1 to 65535 (got \"\(text)\")")
            }
            port = number
        }
        return DatabaseConfiguration(
            host: value("IAP_DB_HOST") ?? "127.0.0.1", port: port, socket: value("IAP_DB_SOCKET"),
            user: value("IAP_DB_USER") ?? "iap", password: value("IAP_DB_PASSWORD") ?? "",
            name: value("IAP_DB_NAME") ?? "iap")
    }
}
