import FastCGI

/// A request as nginx handed it over: what the routes need, read once.
struct HTTPRequest: Sendable {
    let method: String
    /// The path without the query string.
    let path: String
    let query: String
    let body: [UInt8]
    /// The client's address as nginx saw it.
    let clientAddress: String?
    /// The `Authorization` header (a Pub/Sub push's Bearer token); nil when absent.
    var authorization: String? = nil
}
