import Crypto
import Foundation
import SwiftASN1
import _CryptoExtras

/// The signer's RSA signature (PKCS #1 v1.5, SHA-1 or SHA-256), checked by
/// swift-crypto with the leaf's key. PKCS#7 signs either the content itself
/// (Apple's receipts) or signed attributes whose `messageDigest` is the
/// content's digest (what `openssl smime` and most CMS tools write): both are
/// read.
enum ReceiptSignature {
    static func check(_ signedData: PKCS7SignedData, key: _RSA.Signing.PublicKey) throws(AppReceiptError) {
        let signer = signedData.signer
        let digest = try Digest(signer)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signer.signature)
        guard let attributes = signer.signedAttributes else {
            guard digest.verifies(signature, over: signedData.content, key: key) else { throw AppReceiptError.badSignature }
            return
        }
        guard attributes.contentType == nil || attributes.contentType == PKCS7OID.data,
              let messageDigest = attributes.messageDigest,
              messageDigest.elementsEqual(digest.hash(signedData.content)),
              digest.verifies(signature, over: attributes.der, key: key)
        else { throw AppReceiptError.badSignature }
    }

    /// The signer's digest algorithm; a signature algorithm naming its hash
    /// must name the same one.
    enum Digest {
        case sha1, sha256

        init(_ signer: PKCS7SignedData.Signer) throws(AppReceiptError) {
            switch (signer.digestAlgorithm, signer.signatureAlgorithm) {
            case (PKCS7OID.sha1, PKCS7OID.rsaEncryption), (PKCS7OID.sha1, PKCS7OID.sha1WithRSAEncryption):
                self = .sha1
            case (PKCS7OID.sha256, PKCS7OID.rsaEncryption), (PKCS7OID.sha256, PKCS7OID.sha256WithRSAEncryption):
                self = .sha256
            default:
                throw AppReceiptError.unsupportedSignature
            }
        }

        func hash(_ bytes: some DataProtocol) -> [UInt8] {
            switch self {
            case .sha1: Array(Insecure.SHA1.hash(data: bytes))
            case .sha256: Array(SHA256.hash(data: bytes))
            }
        }

        func verifies(_ signature: _RSA.Signing.RSASignature, over bytes: some DataProtocol, key: _RSA.Signing.PublicKey) -> Bool {
            switch self {
            case .sha1: key.isValidSignature(signature, for: Insecure.SHA1.hash(data: bytes), padding: .insecurePKCS1v1_5)
            case .sha256: key.isValidSignature(signature, for: SHA256.hash(data: bytes), padding: .insecurePKCS1v1_5)
            }
        }
    }
}
