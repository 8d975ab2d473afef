import X509

/// The signer's leaf and its intermediate among a receipt's certificates, as
/// encoded there: the leaf is the certificate SignerInfo names (issuer and
/// serial number, or subject key identifier); the intermediate, another one
/// whose subject is the leaf's issuer. The root a receipt may carry plays no
/// part: the chain must end at a configured one.
enum SignerCertificates {
    static func find(in signedData: PKCS7SignedData) throws(AppReceiptError) -> (leaf: ArraySlice<UInt8>, intermediate: ArraySlice<UInt8>) {
        var parsed: [(der: ArraySlice<UInt8>, certificate: Certificate)] = []
        for der in signedData.certificates {
            guard let certificate = try? Certificate(derEncoded: der) else { throw AppReceiptError.missingCertificate }
            parsed.append((der, certificate))
        }
        guard let leafIndex = parsed.firstIndex(where: { signedData.signer.identity.names($0.certificate) }) else {
            throw AppReceiptError.missingCertificate
        }
        let leaf = parsed[leafIndex].certificate
        let intermediate = parsed.indices.first { index in
            index != leafIndex && parsed[index].certificate.subject == leaf.issuer
                && parsed[index].certificate.subject != parsed[index].certificate.issuer
        }
        guard let intermediate else { throw AppReceiptError.untrustedChain }
        return (parsed[leafIndex].der, parsed[intermediate].der)
    }
}

extension PKCS7SignedData.Signer.Identity {
    func names(_ certificate: Certificate) -> Bool {
        switch self {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            return certificate.issuer == issuer && certificate.serialNumber == serialNumber
        case .subjectKeyIdentifier(let keyID):
            guard let identifier = try? certificate.extensions.subjectKeyIdentifier else { return false }
            return identifier.keyIdentifier.elementsEqual(keyID)
        }
    }
}
