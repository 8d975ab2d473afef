import CCurl

/// A libcurl call that failed: the function, its code and curl's own text.
public struct CurlError: Error, CustomStringConvertible, Sendable {
    public let function: String
    public let code: Int32
    public let message: String

    public var description: String {
        "\(function): \(message) (\(code))"
    }

    static func check(_ code: CURLcode, _ function: String) throws(CurlError) {
        guard code != CURLE_OK else { return }
        throw CurlError(function: function, code: Int32(code.rawValue), message: String(cString: curl_easy_strerror(code)))
    }

    static func check(_ code: CURLMcode, _ function: String) throws(CurlError) {
        guard code != CURLM_OK else { return }
        throw CurlError(function: function, code: code.rawValue, message: String(cString: curl_multi_strerror(code)))
    }
}

/// libcurl must be set up once per process, before any thread uses it.
let curlInitialised: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
