import Foundation

extension TrustedRoots {
    /// The roots in the PEM file at `path` (IAP_APPLE_ROOT_CA_FILE).
    /// - Throws: `TrustedRootsError`, `unreadable` when the file cannot be read.
    public init(pemFile path: String) throws(TrustedRootsError) {
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { throw TrustedRootsError.unreadable }
        try self.init(pem: pem)
    }
}
