import Glibc
import IAPCore
import IAPService

// iap-fcgi: reads its configuration from the environment, then serves FastCGI
// until SIGTERM. A bad variable stops it at once with a message naming it.
do {
    let configuration = try ServiceConfiguration.fromEnvironment(ProcessEnvironment.variables())
    try Service(configuration: configuration).run()
    exit(0)
} catch {
    let message = Array("iap-fcgi: \(error)\n".utf8)
    _ = write(2, message, message.count)
    exit(2)
}
