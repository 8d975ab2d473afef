import Glibc
import IAPCore
import IAPService

// iap-fcgi: reads its configuration from the environment, then serves FastCGI
// until SIGTERM. A bad variable stops it at once with a message naming it.
var environment: [String: String] = [:]
var entry = environ
while let pointer = entry.pointee {
    let text = String(cString: pointer)
    if text.hasPrefix("IAP_"), let equals = text.firstIndex(of: "=") {
        environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
    }
    entry += 1
}

do {
    let configuration = try ServiceConfiguration.fromEnvironment(environment)
    try Service(configuration: configuration).run()
    exit(0)
} catch {
    let message = Array("iap-fcgi: \(error)\n".utf8)
    _ = write(2, message, message.count)
    exit(2)
}
