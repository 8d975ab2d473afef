import CCurl
import Glibc

/// One HTTPS request (a POST, or a GET with headers of its own), on an easy handle that is reused for transfer after transfer
/// (libcurl then keeps its connection and TLS session).
///
/// TLS verification is always on: peer and host are verified against `caFile`
/// or the system bundle, TLS 1.2 at least, and only HTTPS may be spoken, except
/// plain HTTP to this machine: an `http://` URL (a webhook on loopback, which
/// the configuration allows only for a loopback host) is sent only on a
/// connection whose remote address is loopback.
public final class CurlTransfer {
    let handle: UnsafeMutableRawPointer
    private var headers: UnsafeMutablePointer<curl_slist>?
    /// The current request's own list (a GET's, a POST's with extra headers) while it runs; nil otherwise.
    private var requestHeaders: UnsafeMutablePointer<curl_slist>?
    /// Requests this transfer has begun to send (see `configureOnce`).
    private var requestsBegun = 0
    /// The current request's URL is `http://`: it may go out on a loopback connection only.
    private var plainHTTP = false
    /// The answer's body; filled while the transfer runs.
    public private(set) var responseBody: [UInt8] = []
    /// Bodies longer than this are refused (the transfer fails).
    public var responseLimit = 4 << 20
    /// Anything the owner wants to find again when the transfer completes.
    public var context: AnyObject?
    /// Scheme, host and port of the current request's URL: the connections it may share.
    public private(set) var origin = ""
    /// The connection the current request went out on, once it began (nil before).
    public private(set) var connection: Connection?
    /// Runs on the driving thread, inside libcurl, when the current request
    /// begins on its connection (`connection` is then known). It must only take note.
    public var onRequestBegun: ((CurlTransfer) -> Void)?

    /// The connection a request went out on.
    public struct Connection: Sendable, Equatable {
        /// Names the connection among those open: remote address and port, local port.
        public let key: String
        /// It speaks HTTP/2 (ALPN "h2"), so it may carry many requests at once.
        public let multiplexed: Bool
    }

    /// How a finished transfer ended.
    public enum Outcome: Sendable, Equatable {
        case answered(httpStatus: Int)
        case timedOut
        case tlsFailed
        case connectionFailed(code: Int32)
    }

    /// `http2`: offer HTTP/2 by ALPN (HTTP/1.1 when the server does not take it);
    /// otherwise HTTP/1.1 only.
    public init(http2: Bool = false) throws(CurlError) {
        guard curlInitialised, let handle = curl_easy_init() else {
            throw CurlError(function: "curl_easy_init", code: -1, message: "libcurl could not be initialised")
        }
        self.handle = handle
        try configureOnce(http2: http2)
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headers)
        curl_slist_free_all(requestHeaders)
    }

    private func configureOnce(http2: Bool) throws(CurlError) {
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_POST, 1)
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        try set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        // HTTP/1.1 with keep-alive, or HTTP/2 when asked and the server takes
        // it. Never CURLOPT_PIPEWAIT: libcurl 7.88 parks such transfers and lets
        // one go per finished transfer (at 2,000 calls most stalled); the owner
        // decides when a transfer starts (`MultiplexGate`).
        try set(CURLOPT_HTTP_VERSION, Int(http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1))
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        try set(CURLOPT_FOLLOWLOCATION, 0)
        // Apple's answers are a few KiB: a smaller receive buffer than the
        // default 16 KiB, times thousands of calls at once.
        try set(CURLOPT_BUFFERSIZE, 8192)
        // The request goes through an upload buffer (64 KiB by default) held
        // for the whole call; a verifyReceipt body is a few KiB (a larger one
        // is sent in pieces). 16 KiB is libcurl's least.
        try set(CURLOPT_UPLOAD_BUFFERSIZE, 16384)
        try CurlError.check(CCurl_easy_setopt_release_idle_tls_buffers(handle), "CURLOPT_SSL_CTX_FUNCTION")
        // No "Expect: 100-continue": it costs a round trip per receipt.
        headers = curl_slist_append(nil, "Content-Type: application/json")
        headers = curl_slist_append(headers, "Expect:")
        try CurlError.check(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers), "CURLOPT_HTTPHEADER")
        try CurlError.check(
            CCurl_easy_setopt_write_function(handle) { data, size, count, context in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                let length = size * count
                if transfer.responseBody.count + length > transfer.responseLimit { return 0 }
                transfer.responseBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
                return length
            }, "CURLOPT_WRITEFUNCTION")
        try CurlError.check(
            CCurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(self).toOpaque()),
            "CURLOPT_WRITEDATA")
        // One request per transfer. When a kept-alive connection it reused
        // closes before any byte of the answer, libcurl sends the request
        // again by itself on another connection, up to 5 times per transfer
        // (lib/transfer.c Curl_retry_request, libcurl 7.88): calls to Apple the
        // retry policy never counted. Each attempt passes the pre-request
        // callback first (lib/multi.c, MSTATE_DO, after the connection is made
        // or reused and before anything is sent): refusing all but the first
        // ends the transfer with CURLE_ABORTED_BY_CALLBACK, and the policy
        // decides whether to call again. (Redirects, authentication and
        // 100-continue, which also send again, are all off.)
        try CurlError.check(
            CCurl_easy_setopt_prereq_function(handle) { context, remoteIP, _, remotePort, localPort in
                let transfer = Unmanaged<CurlTransfer>.fromOpaque(context!).takeUnretainedValue()
                transfer.requestsBegun += 1
                guard transfer.requestsBegun == 1 else { return CURL_PREREQFUNC_ABORT }
                let remote = remoteIP.map { String(cString: $0) } ?? ""
                guard !transfer.plainHTTP || CurlTransfer.isLoopback(remote) else { return CURL_PREREQFUNC_ABORT }
                transfer.connection = Connection(
                    key: "\(remote):\(remotePort) \(localPort)", multiplexed: CCurl_easy_negotiated_http2(transfer.handle) != 0)
                transfer.onRequestBegun?(transfer)
                return CURL_PREREQFUNC_OK
            }, "CURLOPT_PREREQFUNCTION")
        try CurlError.check(
            CCurl_easy_setopt_pointer(handle, CURLOPT_PREREQDATA, Unmanaged.passUnretained(self).toOpaque()),
            "CURLOPT_PREREQDATA")
    }

    /// Sets up the next POST (or, with `method` "PUT", a PUT of the body), with `extraHeaders`
    /// ("Name: value") besides the usual ones. `caFile` nil means the system CA bundle.
    public func prepare(
        url: String, body: [UInt8], caFile: String?, connectTimeoutMs: Int, totalTimeoutMs: Int,
        extraHeaders: [String] = [], method: String = "POST"
    ) throws(CurlError) {
        try prepareCommon(url: url, caFile: caFile, connectTimeoutMs: connectTimeoutMs, totalTimeoutMs: totalTimeoutMs)
        if extraHeaders.isEmpty {
            try useHeaders(headers)
        } else {
            // A body of another type (a form) names its own Content-Type among `extraHeaders`.
            let ownType = extraHeaders.contains { $0.lowercased().hasPrefix("content-type:") }
            var list: UnsafeMutablePointer<curl_slist>? =
                curl_slist_append(nil, ownType ? "Expect:" : "Content-Type: application/json")
            for header in (ownType ? [] : ["Expect:"]) + extraHeaders {
                list = curl_slist_append(list, header)
            }
            try useHeaders(list)
            requestHeaders = list
        }
        try set(CURLOPT_POST, 1)
        if method != "POST" {
            try CurlError.check(CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method), "CURLOPT_CUSTOMREQUEST")
        }
        try set(CURLOPT_POSTFIELDSIZE, body.count)
        try body.withUnsafeBufferPointer { buffer throws(CurlError) in
            // COPYPOSTFIELDS copies: the body need not outlive this call.
            try CurlError.check(
                CCurl_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress)),
                "CURLOPT_COPYPOSTFIELDS")
        }
    }

    /// Sets up the next GET, with `extraHeaders` ("Name: value") besides the usual ones.
    public func prepareGET(
        url: String, extraHeaders: [String], caFile: String?, connectTimeoutMs: Int, totalTimeoutMs: Int
    ) throws(CurlError) {
        try prepareCommon(url: url, caFile: caFile, connectTimeoutMs: connectTimeoutMs, totalTimeoutMs: totalTimeoutMs)
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Accept: application/json")
        for header in extraHeaders {
            list = curl_slist_append(list, header)
        }
        try useHeaders(list)
        requestHeaders = list
        try set(CURLOPT_HTTPGET, 1)
    }

    /// Whether the next request must go on a new connection rather than a kept-alive one.
    public func useNewConnection(_ isNew: Bool) throws(CurlError) {
        try set(CURLOPT_FRESH_CONNECT, isNew ? 1 : 0)
    }

    /// The value of the answer's header `name` (case-insensitive), once the transfer has finished.
    public func responseHeader(_ name: String) -> String? {
        CCurl_easy_header_value(handle, name).map { String(cString: $0) }
    }

    private func prepareCommon(url: String, caFile: String?, connectTimeoutMs: Int, totalTimeoutMs: Int) throws(CurlError) {
        responseBody.removeAll(keepingCapacity: true)
        requestsBegun = 0
        connection = nil
        origin = Self.origin(of: url)
        plainHTTP = url.utf8.count >= 7 && String(decoding: url.utf8.prefix(7), as: UTF8.self).lowercased() == "http://"
        try CurlError.check(
            CCurl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, plainHTTP ? "http" : "https"), "CURLOPT_PROTOCOLS_STR")
        try CurlError.check(CCurl_easy_setopt_string(handle, CURLOPT_URL, url), "CURLOPT_URL")
        // A reused handle forgets the method a PUT set.
        try CurlError.check(CCurl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, nil), "CURLOPT_CUSTOMREQUEST")
        if let caFile {
            try CurlError.check(CCurl_easy_setopt_string(handle, CURLOPT_CAINFO, caFile), "CURLOPT_CAINFO")
        }
        try setTimeouts(connectTimeoutMs: connectTimeoutMs, totalTimeoutMs: totalTimeoutMs)
    }

    /// Sets the timeouts again, for a prepared transfer that waited before it started.
    public func setTimeouts(connectTimeoutMs: Int, totalTimeoutMs: Int) throws(CurlError) {
        try set(CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMs)
        try set(CURLOPT_TIMEOUT_MS, totalTimeoutMs)
    }

    /// "https://host:port" of "https://host:port/path?query" (a scheme is always there: HTTPS, or HTTP to loopback).
    static func origin(of url: String) -> String {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return url }
        let hostStart = min(colon + 3, bytes.count)
        let end = bytes[hostStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.count
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    /// Whether `address` (libcurl's text of a connection's remote IP) is 127.0.0.0/8, ::1 or
    /// an IPv4-mapped 127.0.0.0/8.
    static func isLoopback(_ address: String) -> Bool {
        var ipv4 = in_addr()
        if inet_pton(AF_INET, address, &ipv4) == 1 {
            return UInt32(bigEndian: ipv4.s_addr) >> 24 == 127
        }
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET6, address, &ipv6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: ipv6) { Array($0) }
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
        return bytes == Array(repeating: 0, count: 15) + [1] || (mapped && bytes[12] == 127)
    }

    /// Points the handle at `list` and frees the previous GET's own list (no transfer uses it any more).
    private func useHeaders(_ list: UnsafeMutablePointer<curl_slist>?) throws(CurlError) {
        try CurlError.check(CCurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")
        curl_slist_free_all(requestHeaders)
        requestHeaders = nil
    }

    /// Reads how a finished transfer ended from curl's result code.
    func outcome(of code: CURLcode) -> Outcome {
        switch code {
        case CURLE_OK:
            var status = 0
            _ = CCurl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            return .answered(httpStatus: status)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR:
            return .tlsFailed
        default:
            return .connectionFailed(code: Int32(code.rawValue))
        }
    }

    private func set(_ option: CURLoption, _ value: Int) throws(CurlError) {
        try CurlError.check(CCurl_easy_setopt_long(handle, option, value), "curl_easy_setopt")
    }
}
