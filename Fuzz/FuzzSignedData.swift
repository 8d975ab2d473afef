// Linked with the IAPCore and SignedData modules scripts/fuzz compiles with coverage.
import Foundation
import IAPCore
import SignedData

/// Trusts the test PKI's root of the seed corpus (FUZZ_SIGNED_DATA_ROOT), so
/// that inputs close to a good JWS get past the chain and reach the signature
/// and the payload. Without it nothing would: a missing or bad root stops the
/// run at its first input instead of fuzzing the header parser alone.
private let verifier = SignedDataVerifier(roots: fuzzRoots())

private func fuzzRoots() -> TrustedRoots {
    guard let path = ProcessInfo.processInfo.environment["FUZZ_SIGNED_DATA_ROOT"], !path.isEmpty else {
        fatalError("FuzzSignedData: FUZZ_SIGNED_DATA_ROOT is unset: name the test root (scripts/fuzz does)")
    }
    guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
        fatalError("FuzzSignedData: cannot read FUZZ_SIGNED_DATA_ROOT \(path)")
    }
    do {
        return try TrustedRoots(pem: pem)
    } catch {
        fatalError("FuzzSignedData: FUZZ_SIGNED_DATA_ROOT \(path) holds no usable root: \(error)")
    }
}

/// How the inputs ended, by `SignedDataError` case or "verified"; printed at
/// exit, so that scripts/fuzz can check the signature was reached (inputs
/// verified and inputs refused for their signature). libFuzzer runs one input
/// at a time.
nonisolated(unsafe) private var outcomes: [String: Int] = [:]
private let printOutcomesAtExit: Void = {
    atexit {
        let counts = outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("FuzzSignedData outcomes: \(counts)")
    }
}()

/// Any bytes as a JWS: split, decoded and verified. Whatever parses must be
/// consistent with the input; nothing may crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedData(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = printOutcomesAtExit
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let parts = try? CompactJWS(bytes) {
        precondition(bytes.starts(with: parts.signingInput), "the signing input is not the input's prefix")
        precondition(bytes[parts.signingInput.count] == UInt8(ascii: "."), "the signing input ends off a dot")
        _ = try? parts.certificateChainDER()
    }
    do {
        let transaction = try verifier.verifyTransaction(bytes)
        precondition(!transaction.transactionID.isEmpty || transaction.payload.count > 0)
        outcomes["verified", default: 0] += 1
    } catch {
        precondition(SignedDataError.allCases.contains(error), "an error outside SignedDataError")
        outcomes[error.rawValue, default: 0] += 1
    }
    return 0
}
