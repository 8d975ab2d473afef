import Crypto
import _CryptoExtras

/// Staff passwords, hashed with scrypt (swift-crypto's `KDF.Scrypt`) at OWASP's
/// minimum cost for it, N = 2^17, r = 8, p = 1: 128 MiB per hash, so that a
/// stolen `staff` table is slow to guess. Stored as `scrypt$log2N$r$p$salt$hash`
/// (hex): a hash made at an older cost still verifies with its own parameters,
/// and is made again at today's cost when its password next logs in.
public enum StaffPassword {
    static let log2N = 17
    static let blockSize = 8
    static let parallelism = 1
    static let saltBytes = 16
    static let hashBytes = 32

    /// A new hash of `password` with a fresh random salt.
    public static func hash(_ password: String) -> String {
        var salt = [UInt8](repeating: 0, count: saltBytes)
        var random = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = random.next() }
        let derived = scrypt(password, salt: salt, log2N: log2N, r: blockSize, p: parallelism)!
        return "scrypt$\(log2N)$\(blockSize)$\(parallelism)$\(lowercaseHex(salt))$\(lowercaseHex(derived))"
    }

    /// Whether `password` is the one `stored` was made from. A malformed `stored` matches nothing.
    public static func verify(_ password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let log2N = Int(parts[1]), (10...20).contains(log2N),
            let r = Int(parts[2]), (1...32).contains(r), let p = Int(parts[3]), (1...16).contains(p),
            let salt = bytes(hex: parts[4]), let expected = bytes(hex: parts[5]), expected.count == hashBytes,
            let derived = scrypt(password, salt: salt, log2N: log2N, r: r, p: p)
        else { return false }
        return ConstantTime.equal(lowercaseHex(derived), lowercaseHex(expected))
    }

    /// What a login checks the password against when its name is no account: a hash at today's cost
    /// that no password gives, so that the answer takes as long as for a real name.
    public static let noAccountHash =
        "scrypt$\(log2N)$\(blockSize)$\(parallelism)$\(String(repeating: "0", count: saltBytes * 2))$"
        + String(repeating: "0", count: hashBytes * 2)

    /// Whether `stored` was made at another cost than today's (and should be made again).
    public static func isOutdated(_ stored: String) -> Bool {
        !stored.hasPrefix("scrypt$\(log2N)$\(blockSize)$\(parallelism)$")
    }

    /// scrypt of `password`, or nil when the parameters are refused. The same function as OpenSSL's
    /// `EVP_PBE_scrypt`, which made the hashes stored before: they verify unchanged.
    private static func scrypt(_ password: String, salt: [UInt8], log2N: Int, r: Int, p: Int) -> [UInt8]? {
        guard
            let key = try? KDF.Scrypt.deriveKey(
                from: Array(password.utf8), salt: salt, outputByteCount: hashBytes, rounds: 1 << log2N,
                blockSize: r, parallelism: p)
        else { return nil }
        return key.withUnsafeBytes { Array($0) }
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, !digits.isEmpty else { return nil }
        var out: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }

    /// 32 random bytes in hex: a session cookie or a CSRF token.
    public static func randomToken() -> String {
        var random = SystemRandomNumberGenerator()
        return lowercaseHex((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
    }
}
