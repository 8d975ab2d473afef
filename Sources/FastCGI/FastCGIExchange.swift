import CFastCGI
import Glibc

/// One FastCGI request and its answer. It may be answered from any thread, but
/// from one at a time, and exactly once: `respond` finishes and frees it.
public final class FastCGIExchange: @unchecked Sendable {
    private let request: UnsafeMutablePointer<FCGX_Request>
    private let listener: FastCGIListener
    private var finished = false
    /// The body was read to its end: only then can the connection carry a next request.
    private var bodyConsumed = false

    init(request: UnsafeMutablePointer<FCGX_Request>, listener: FastCGIListener) {
        self.request = request
        self.listener = listener
    }

    deinit {
        // A request dropped without an answer is a bug; nginx still gets one
        // rather than a connection that never ends.
        if !finished {
            respond(status: 500, reason: "Internal Server Error", headers: [], body: [])
        }
    }

    /// A CGI parameter that nginx sent (`REQUEST_METHOD`, `QUERY_STRING`, ...).
    public func parameter(_ name: String) -> String? {
        guard let value = FCGX_GetParam(name, request.pointee.envp) else { return nil }
        return String(cString: value)
    }

    /// Reads the request body, `declaredLength` bytes by `CONTENT_LENGTH` (checked:
    /// 0...limit). Returns nil when more than `limit` bytes arrive, without reading the rest.
    public func readBody(declaredLength: Int, limit: Int) -> [UInt8]? {
        precondition((0...limit).contains(declaredLength), "CONTENT_LENGTH is checked before the body is read")
        var body = [UInt8](repeating: 0, count: declaredLength + 1)
        var length = 0
        while true {
            if length == body.count {
                if body.count > limit { return nil }
                body.append(contentsOf: repeatElement(0, count: min(body.count, limit + 1 - body.count)))
            }
            let read = body.withUnsafeMutableBufferPointer { buffer in
                FCGX_GetStr(
                    UnsafeMutableRawPointer(buffer.baseAddress! + length).assumingMemoryBound(to: CChar.self),
                    Int32(buffer.count - length), request.pointee.in)
            }
            if read <= 0 {
                bodyConsumed = read == 0
                break
            }
            length += Int(read)
            if length > limit { return nil }
        }
        body.removeLast(body.count - length)
        return body
    }

    /// Writes the answer (a `Status:` header, other headers, the body), then
    /// finishes the request and frees it.
    public func respond(status: Int, reason: String, headers: [(String, String)], body: [UInt8]) {
        var head = "Status: \(status) \(reason)\r\n"
        for (name, value) in headers {
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: \(body.count)\r\n\r\n"
        var output = Array(head.utf8)
        output.append(contentsOf: body)
        output.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                _ = FCGX_PutStr($0, Int32(buffer.count), request.pointee.out)
            }
        }
        finish()
    }

    private func finish() {
        precondition(!finished, "a FastCGI request was answered twice")
        finished = true
        // Unread body records would be taken for the next request's.
        if !bodyConsumed { request.pointee.keepConnection = 0 }
        FCGX_Finish_r(request)
        // libfcgi leaves the connection open only when nginx asked to keep it.
        let keptConnection = request.pointee.ipcFd
        request.deallocate()
        if keptConnection >= 0 { listener.keep(keptConnection) }
    }
}
