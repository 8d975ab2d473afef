import Foundation
import IAPCore

/// The fixtures made by Fixtures/regenerate (Python's cryptography, the test
/// PKI of Tests/Simulator/signed_data.py), and JWS derived from them.
enum SignedDataFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    static func text(_ name: String) -> String {
        // A missing fixture is a broken checkout: stop at once.
        let contents = try! String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        return contents.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The signed transaction of the named chain (`good`, `untrusted`, `forged`, ...).
    static func jws(_ chain: String) -> String {
        text(chain + ".jws")
    }

    static let testRootPEM = text("signing-root.pem")
    static let untrustedRootPEM = text("signing-untrusted-root.pem")

    static func parts(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The header of `jws` as JSON members, for edits.
    static func header(_ jws: String) -> JSONObject {
        try! JSONParser.parse(Base64.decodeURL(ArraySlice(parts(jws)[0].utf8))!).objectValue!
    }

    /// `jws` with its header replaced (the signature left as it was).
    static func replacingHeader(of jws: String, with header: JSONObject) -> String {
        let all = parts(jws)
        return [base64URL(JSONValue.object(header).serialized()), all[1], all[2]].joined(separator: ".")
    }

    /// `jws` with one member of its header set to `value`.
    static func settingHeader(_ key: String, to value: JSONValue, in jws: String) -> String {
        var header = header(jws)
        header.members = header.members.map { $0.key == key ? (key, value) : $0 }
        return replacingHeader(of: jws, with: header)
    }

    /// `jws` with its payload replaced (the signature left as it was).
    static func replacingPayload(of jws: String, with payload: [UInt8]) -> String {
        let all = parts(jws)
        return [all[0], base64URL(payload), all[2]].joined(separator: ".")
    }

    static func payload(_ jws: String) -> [UInt8] {
        Base64.decodeURL(ArraySlice(parts(jws)[1].utf8))!
    }
}
