import Foundation
import X509

/// What `iapctl receipt` shows of a receipt: its certificates and fields as far
/// as they read, and the verdict of the same checks the service runs.
public struct AppReceiptInspection: Sendable {
    /// A certificate of the receipt, for people to read.
    public struct CertificateSummary: Equatable, Sendable {
        public let subject: String
        public let issuer: String
        /// E.g. `RSA2048.PublicKey`.
        public let key: String
        /// E.g. `SignatureAlgorithm.sha256WithRSAEncryption`.
        public let signatureAlgorithm: String
        public let notValidBeforeMs: Int64
        public let notValidAfterMs: Int64
    }

    /// The receipt's certificates in receipt order; empty when its structure
    /// does not read. One that does not parse is left out.
    public let certificates: [CertificateSummary]
    /// The payload, whether or not the receipt passes; nil when it does not read.
    public let payload: AppReceiptPayload?
    public let verdict: Result<VerifiedAppReceipt, AppReceiptError>
}

extension AppReceiptVerifier {
    /// Reads and checks `receipt` as `verify` does, keeping what reads of it
    /// when a check fails (support staff see what a refused receipt claims).
    public func inspect(_ receipt: [UInt8]) -> AppReceiptInspection {
        let verdict: Result<VerifiedAppReceipt, AppReceiptError>
        do {
            verdict = .success(try verify(receipt))
        } catch {
            verdict = .failure(error)
        }
        guard let signedData = try? PKCS7SignedData(berEncoded: receipt) else {
            return AppReceiptInspection(certificates: [], payload: nil, verdict: verdict)
        }
        let certificates = signedData.certificates.compactMap { try? Certificate(derEncoded: $0) }.map {
            AppReceiptInspection.CertificateSummary(
                subject: $0.subject.description, issuer: $0.issuer.description, key: $0.publicKey.description,
                signatureAlgorithm: $0.signatureAlgorithm.description,
                notValidBeforeMs: Int64(($0.notValidBefore.timeIntervalSince1970 * 1000).rounded(.down)),
                notValidAfterMs: Int64(($0.notValidAfter.timeIntervalSince1970 * 1000).rounded(.down)))
        }
        return AppReceiptInspection(
            certificates: certificates, payload: try? AppReceiptPayload(berEncoded: signedData.content), verdict: verdict)
    }
}
