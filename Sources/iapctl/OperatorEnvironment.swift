import Glibc
import IAPCore

/// iapctl reads iap-fcgi's env file itself, by systemd's `EnvironmentFile=` rules, so that `iapctl`
/// in an operator's shell connects with exactly the values the service and the timers get (a shell's
/// `. file` reads `$`, `&`, quotes and spaces its own way). `IAP_ENV_FILE` names the file; unset, it
/// is `/etc/iap-fcgi/iap-fcgi.env` when that exists; empty, none is read. A variable already in the
/// environment keeps its value.
enum OperatorEnvironment {
    static let packagedFile = "/etc/iap-fcgi/iap-fcgi.env"

    static func load() {
        let named = getenv("IAP_ENV_FILE").map { String(cString: $0) }
        if named == "" { return }
        let path = named ?? packagedFile
        guard named != nil || access(path, F_OK) == 0 else { return }
        guard let text = try? String(readingFile: path) else {
            let reason = String(cString: strerror(errno))
            let message = "iapctl: cannot read the env file \(path) (IAP_ENV_FILE): \(reason)\n"
            _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            exit(1)
        }
        for variable in EnvironmentFile.parse(text) { setenv(variable.name, variable.value, 0) }
    }
}
