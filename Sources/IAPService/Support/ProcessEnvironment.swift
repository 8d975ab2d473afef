import Glibc

/// The process's environment variables (iap-fcgi and iapctl are configured
/// through them).
public enum ProcessEnvironment {
    public static func variables() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                variables[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }
}
