import Foundation
import IAPCore
import SwiftASN1
import X509

/// The roots a signed JWS must chain to: Apple Root CA - G3 unless the
/// operator names others (IAP_APPLE_ROOT_CA_FILE, a PEM that may hold several).
public struct TrustedRoots: Sendable {
    public let certificates: [Certificate]

    /// Apple Root CA - G3, compiled in.
    public static let apple = try! TrustedRoots(pem: AppleRootCA.g3PEM)  // a constant: a failure is a bug

    /// Every `CERTIFICATE` block of `pem`.
    /// - Throws: `TrustedRootsError` when a block does not parse or there is none.
    public init(pem: String) throws(TrustedRootsError) {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: pem)
        } catch {
            throw TrustedRootsError.notPEM
        }
        var certificates: [Certificate] = []
        for document in documents where document.discriminator == "CERTIFICATE" {
            guard let certificate = try? Certificate(derEncoded: document.derBytes) else {
                throw TrustedRootsError.badCertificate(index: certificates.count)
            }
            certificates.append(certificate)
        }
        guard !certificates.isEmpty else { throw TrustedRootsError.noCertificate }
        self.certificates = certificates
    }

    /// When each root expires, in file order (for metrics and `iapctl status`).
    public var lifetimes: [CertificateLifetime] {
        certificates.map(CertificateLifetime.init)
    }
}

extension CertificateLifetime {
    init(_ certificate: Certificate) {
        self.init(
            subject: certificate.subject.description,
            notValidAfterMs: Int64((certificate.notValidAfter.timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

/// Why a root file was refused, for the operator at start-up.
public enum TrustedRootsError: Error, Equatable, Sendable {
    /// The file cannot be read as UTF-8 text.
    case unreadable
    case notPEM
    case noCertificate
    /// The certificate at `index` (from 0, in file order) is not valid DER X.509.
    case badCertificate(index: Int)
}
