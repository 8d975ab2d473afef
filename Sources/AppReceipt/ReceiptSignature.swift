import Crypto
import SwiftASN1
import X509

/// The signer's RSA signature, checked by swift-certificates with the leaf's
/// key (PKCS #1 v1.5, SHA-1 or SHA-256). PKCS#7 signs either the content
/// itself (Apple's receipts) or signed attributes whose `messageDigest` is the
/// content's digest (what `openssl smime` and most CMS tools write): both are
/// read.
enum ReceiptSignature {
    static func check(_ signedData: PKCS7SignedData, key: Certificate.PublicKey) throws(AppReceiptError) {
        let signer = signedData.signer
        let algorithm = try signatureAlgorithm(signer)
        guard let attributes = signer.signedAttributes else {
            guard key.isValidSignature(signer.signature, for: signedData.content, signatureAlgorithm: algorithm) else {
                throw AppReceiptError.badSignature
            }
            return
        }
        guard attributes.contentType == nil || attributes.contentType == PKCS7OID.data,
              let messageDigest = attributes.messageDigest,
              messageDigest.elementsEqual(digest(signedData.content, algorithm: algorithm)),
              key.isValidSignature(signer.signature, for: attributes.der, signatureAlgorithm: algorithm)
        else { throw AppReceiptError.badSignature }
    }

    /// RSA with the signer's digest algorithm, SHA-1 or SHA-256; a signature
    /// algorithm naming its hash must name the same one.
    static func signatureAlgorithm(_ signer: PKCS7SignedData.Signer) throws(AppReceiptError) -> Certificate.SignatureAlgorithm {
        switch (signer.digestAlgorithm, signer.signatureAlgorithm) {
        case (PKCS7OID.sha1, PKCS7OID.rsaEncryption), (PKCS7OID.sha1, PKCS7OID.sha1WithRSAEncryption):
            return .sha1WithRSAEncryption
        case (PKCS7OID.sha256, PKCS7OID.rsaEncryption), (PKCS7OID.sha256, PKCS7OID.sha256WithRSAEncryption):
            return .sha256WithRSAEncryption
        default:
            throw AppReceiptError.unsupportedSignature
        }
    }

    private static func digest(_ content: ArraySlice<UInt8>, algorithm: Certificate.SignatureAlgorithm) -> [UInt8] {
        algorithm == .sha1WithRSAEncryption ? Array(Insecure.SHA1.hash(data: content)) : Array(SHA256.hash(data: content))
    }
}
