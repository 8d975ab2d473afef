extension DatabaseConfiguration {
    /// Reads `IAP_DB_HOST`, `IAP_DB_PORT`, `IAP_DB_SOCKET`, `IAP_DB_USER`,
    /// `IAP_DB_PASSWORD` and `IAP_DB_NAME`: iap-fcgi and iapctl share them.
    /// Empty values count as unset.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> DatabaseConfiguration {
        let reader = EnvironmentReader(env)
        return DatabaseConfiguration(
            host: reader["IAP_DB_HOST"] ?? "127.0.0.1",
            port: try reader.integer("IAP_DB_PORT", default: 3306, in: 1...65535, "must be a TCP port from 1 to 65535"),
            socket: reader["IAP_DB_SOCKET"],
            user: reader["IAP_DB_USER"] ?? "iap",
            password: reader["IAP_DB_PASSWORD"] ?? "",
            name: reader["IAP_DB_NAME"] ?? "iap")
    }
}
