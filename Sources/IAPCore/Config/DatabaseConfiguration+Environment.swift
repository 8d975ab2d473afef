extension DatabaseConfiguration {
    /// Reads `IAP_DB_HOST`, `IAP_DB_PORT`, `IAP_DB_SOCKET`, `IAP_DB_USER`,
    /// `IAP_DB_PASSWORD`, `IAP_DB_NAME`, `IAP_DB_TLS` and `IAP_DB_CA_FILE`:
    /// iap-fcgi and iapctl share them. Empty values count as unset.
    public static func fromEnvironment(_ env: [String: String]) throws(ConfigurationError) -> DatabaseConfiguration {
        let reader = EnvironmentReader(env)
        let tls = try tlsMode(reader)
        let caFile = reader["IAP_DB_CA_FILE"]
        if let caFile, tls == .off {
            throw .invalid(
                "IAP_DB_CA_FILE", "is set but IAP_DB_TLS is off: set IAP_DB_TLS=verify to use it, or unset it",
                got: caFile)
        }
        let socket = reader["IAP_DB_SOCKET"]
        if tls == .verify, socket != nil {
            throw .invalid(
                "IAP_DB_TLS",
                "is verify but IAP_DB_SOCKET is set: TLS is for TCP (IAP_DB_HOST, IAP_DB_PORT); a unix socket is "
                    + "local, leave IAP_DB_TLS off for it",
                got: "verify")
        }
        let host = reader["IAP_DB_HOST"] ?? "127.0.0.1"
        let port = try reader.integer("IAP_DB_PORT", default: 3306, in: 1...65535, "must be a TCP port from 1 to 65535")
        guard DatabaseAddress.list(host, defaultPort: port) != nil else {
            throw .invalid(
                "IAP_DB_HOST",
                "must be a host, or a comma-separated list of host or host:port tried in order "
                    + "(e.g. db1.internal,db2.internal:3307,[fd00::3]:3306)",
                got: host)
        }
        return DatabaseConfiguration(
            host: host,
            port: port,
            socket: socket,
            user: reader["IAP_DB_USER"] ?? "iap",
            password: reader["IAP_DB_PASSWORD"] ?? "",
            name: reader["IAP_DB_NAME"] ?? "iap",
            tls: tls,
            caFile: caFile)
    }

    private static func tlsMode(_ reader: EnvironmentReader) throws(ConfigurationError) -> DatabaseTLS {
        guard let text = reader["IAP_DB_TLS"] else { return .off }
        guard let mode = DatabaseTLS(rawValue: text.lowercased()) else {
            throw .invalid(
                "IAP_DB_TLS",
                "must be off (no TLS: a unix socket or a trusted network) or verify (TLS, the server's certificate "
                    + "checked against IAP_DB_CA_FILE, or the system's CAs, and against IAP_DB_HOST)",
                got: text)
        }
        return mode
    }
}
