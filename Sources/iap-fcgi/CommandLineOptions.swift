import IAPCore

/// iap-fcgi takes its configuration from the environment only; its arguments are `--help` and
/// `--version`, for operators and for the man page the Debian package builds from them (help2man).
enum CommandLineOptions {
    /// What to print and the exit status for `arguments` (without the program name), or nil to serve.
    static func answer(to arguments: [String]) -> (text: String, status: Int32)? {
        guard let first = arguments.first else { return nil }
        switch first {
        case "--help", "-h": return (help, 0)
        case "--version", "-V": return ("iap-fcgi \(ServiceVersion.current)\n", 0)
        default: return ("iap-fcgi: unknown argument \(first) (the configuration is in the environment; see --help)\n", 2)
        }
    }

    static let help = """
        Usage: iap-fcgi [--help | --version]

        Serve Apple In-App Purchase verification and delivery over FastCGI, behind nginx, until SIGTERM.

        The configuration comes from the environment only (under systemd: /etc/iap-fcgi/iap-fcgi.env,
        which describes every variable). The FastCGI socket is standard input (systemd's
        iap-fcgi.socket, spawn-fcgi) unless IAP_LISTEN names a unix socket path or host:port.
        IAP_BUNDLE_IDS is required; the database is reached with IAP_DB_HOST, IAP_DB_PORT,
        IAP_DB_SOCKET, IAP_DB_USER, IAP_DB_PASSWORD and IAP_DB_NAME (the schema: iapctl migrate).
        A bad variable stops the start with a message naming it (exit status 2).

        Options:
          -h, --help     print this help and exit
          -V, --version  print the version and exit

        """
}
