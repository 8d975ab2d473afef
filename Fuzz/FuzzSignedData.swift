// Linked with the IAPCore and SignedData modules scripts/fuzz compiles with coverage.
import Foundation
import IAPCore
import SignedData

/// Trusts the test PKI's root of the seed corpus, so that inputs close to a
/// good JWS get past the chain and reach the signature and the payload.
private let verifier = SignedDataVerifier(roots: fuzzRoots())

private func fuzzRoots() -> TrustedRoots {
    let path = ProcessInfo.processInfo.environment["FUZZ_SIGNED_DATA_ROOT"] ?? ""
    guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else { return .apple }
    return (try? TrustedRoots(pem: pem)) ?? .apple
}

/// Any bytes as a JWS: split, decoded and verified. Whatever parses must be
/// consistent with the input; nothing may crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedData(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let parts = try? CompactJWS(bytes) {
        precondition(bytes.starts(with: parts.signingInput), "the signing input is not the input's prefix")
        precondition(bytes[parts.signingInput.count] == UInt8(ascii: "."), "the signing input ends off a dot")
        _ = try? parts.certificateChainDER()
    }
    do {
        let transaction = try verifier.verifyTransaction(bytes)
        precondition(!transaction.transactionID.isEmpty || transaction.payload.count > 0)
    } catch {
        precondition(SignedDataError.allCases.contains(error), "an error outside SignedDataError")
    }
    return 0
}
