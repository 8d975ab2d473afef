/// The support console (`IAP_CONSOLE_LISTEN`): staff pages on a FastCGI
/// listener of their own, which the public nginx server never routes to.
public struct ConsoleConfiguration: Equatable, Sendable {
    /// `IAP_CONSOLE_LISTEN`: a unix socket path or `host:port`, never `IAP_LISTEN`'s.
    public var listen: ListenAddress
    /// `IAP_CONSOLE_IDLE_TIMEOUT_S`: a session unused this long ends. Default 1800 (30 minutes).
    public var idleTimeoutSeconds: Int
    /// `IAP_CONSOLE_ABSOLUTE_TIMEOUT_S`: a session ends this long after its login, used or not.
    /// Default 43200 (12 hours).
    public var absoluteTimeoutSeconds: Int

    public static let defaultIdleTimeoutSeconds = 1800
    public static let defaultAbsoluteTimeoutSeconds = 43_200
    static let timeoutRange = 10...604_800

    public init(
        listen: ListenAddress, idleTimeoutSeconds: Int = defaultIdleTimeoutSeconds,
        absoluteTimeoutSeconds: Int = defaultAbsoluteTimeoutSeconds
    ) {
        self.listen = listen
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.absoluteTimeoutSeconds = absoluteTimeoutSeconds
    }

    /// Reads `IAP_CONSOLE_*`; nil when `IAP_CONSOLE_LISTEN` is unset (no console).
    /// - Throws: the bad variable, named: an address that is not one, the public
    ///   listener's own address, a timeout out of range.
    static func fromEnvironment(
        _ env: [String: String], publicListen: ListenAddress
    ) throws(ConfigurationError) -> ConsoleConfiguration? {
        let reader = EnvironmentReader(env)
        guard let text = reader["IAP_CONSOLE_LISTEN"] else { return nil }
        guard let listen = ListenAddress(text) else {
            throw .invalid(
                "IAP_CONSOLE_LISTEN",
                "must be host:port (e.g. 127.0.0.1:9100) or a unix socket path containing \"/\""
                    + " of at most \(ListenAddress.maxUnixPathBytes) bytes",
                got: text)
        }
        if listen == publicListen {
            throw .invalid(
                "IAP_CONSOLE_LISTEN", "must differ from IAP_LISTEN: the console never shares the public listener",
                got: text)
        }
        let idle = try reader.integer(
            "IAP_CONSOLE_IDLE_TIMEOUT_S", default: defaultIdleTimeoutSeconds, in: timeoutRange,
            "must be a whole number of seconds from 10 to 604800")
        let absolute = try reader.integer(
            "IAP_CONSOLE_ABSOLUTE_TIMEOUT_S", default: defaultAbsoluteTimeoutSeconds, in: timeoutRange,
            "must be a whole number of seconds from 10 to 604800")
        guard absolute >= idle else {
            throw .invalid(
                "IAP_CONSOLE_ABSOLUTE_TIMEOUT_S", "must not be shorter than IAP_CONSOLE_IDLE_TIMEOUT_S (\(idle))",
                got: String(absolute))
        }
        return ConsoleConfiguration(listen: listen, idleTimeoutSeconds: idle, absoluteTimeoutSeconds: absolute)
    }
}
