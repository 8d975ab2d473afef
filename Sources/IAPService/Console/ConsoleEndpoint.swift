import FastCGI
import Glibc
import IAPCore

/// The support console's FastCGI listener (`IAP_CONSOLE_LISTEN`) and its
/// threads: the service's own threads, each with its own database connection,
/// as the public accept threads. The public listener's router knows none of
/// the console's paths (they answer 404 there).
final class ConsoleEndpoint: FastCGIServer {
    let listener: FastCGIListener
    let configuration: ConsoleConfiguration
    private let router: ConsoleRouter
    let database: Database
    let inflight: InflightCounter
    /// Staff are few: two threads, so that one slow page (Apple's lookup) does not hold the others.
    static let threads = 2

    init(
        _ console: ConsoleConfiguration, service: ServiceConfiguration, policy: ConnectionPolicy,
        appStoreServer: AppStoreServerClient?, database: Database, inflight: InflightCounter
    ) throws {
        configuration = console
        self.database = database
        self.inflight = inflight
        do {
            switch console.listen {
            case .unix(let path):
                listener = try FastCGIListener.open(path, backlog: 64, isUnixPath: true, policy: policy)
            case .tcp(let host, let port):
                listener = try FastCGIListener.open(
                    "\(host.contains(":") ? "[\(host)]" : host):\(port)", backlog: 64, isUnixPath: false, policy: policy)
            case .inheritedSocket:
                throw ConfigurationError(variable: "IAP_CONSOLE_LISTEN", problem: "must name an address or a socket path")
            }
        } catch let error as FastCGIError {
            throw ConfigurationError(variable: "IAP_CONSOLE_LISTEN", problem: "cannot listen on \(console.listen): \(error)")
        }
        router = ConsoleRouter(configuration: service, console: console, appStoreServer: appStoreServer)
    }

    var threadName: String { "console" }
    var threadCount: Int { Self.threads }

    /// A console request carries the staff session's cookie.
    func serve(_ request: HTTPRequest, exchange: FastCGIExchange, responder: Responder, worker: WorkerContext) {
        let console = ConsoleRequest(http: request, cookieHeader: exchange.parameter("HTTP_COOKIE"))
        responder.send(router.handle(console, connection: worker.connection))
    }
}
