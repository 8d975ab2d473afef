import Glibc
import IAPCore
import IAPService

// iap-fcgi: reads its configuration from the environment, then serves FastCGI
// until SIGTERM. A bad variable stops it at once with a message naming it.
if let answer = CommandLineOptions.answer(to: Array(CommandLine.arguments.dropFirst())) {
    let bytes = Array(answer.text.utf8)
    _ = write(answer.status == 0 ? 1 : 2, bytes, bytes.count)
    exit(answer.status)
}
do {
    let configuration = try ServiceConfiguration.fromEnvironment(ProcessEnvironment.variables())
    try Service(configuration: configuration).run()
    exit(0)
} catch {
    let message = Array("iap-fcgi: \(error)\n".utf8)
    _ = write(2, message, message.count)
    exit(2)
}
