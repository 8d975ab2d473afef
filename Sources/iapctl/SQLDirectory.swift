import Glibc

/// Where `iapctl migrate` and `iapctl status` find the numbered `.sql` files when `--sql-dir` is not
/// given: the installed ones beside iapctl (`share/iap-fcgi/sql` under the prefix whose `bin/` holds
/// it: `/usr/share/iap-fcgi/sql` for the package's `/usr/bin/iapctl`), else `sql` in the current
/// folder, a checkout's.
enum SQLDirectory {
    static let help = "The folder of numbered .sql files (default: /usr/share/iap-fcgi/sql for an installed iapctl, else sql)."

    static func resolve(_ option: String?) -> String {
        if let option { return option }
        if let installed = installed(), access(installed, R_OK | X_OK) == 0 { return installed }
        return "sql"
    }

    private static func installed() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = readlink("/proc/self/exe", &buffer, buffer.count)
        guard count > 0 else { return nil }
        let executable = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // <prefix>/bin/iapctl: two components up.
        let folders = executable.split(separator: "/", omittingEmptySubsequences: false).dropLast(2)
        return folders.joined(separator: "/") + "/share/iap-fcgi/sql"
    }
}
