// Linked with the IAPCore, SignedData and AppReceipt modules scripts/fuzz compiles with coverage.
import AppReceipt
import Foundation
import IAPCore
import SignedData

/// Trusts the test PKI's root of the seed corpus (FUZZ_APP_RECEIPT_ROOT), so
/// that inputs close to a good receipt get past the chain and reach the
/// signature and the payload. Without it nothing would: a missing or bad root
/// stops the run at its first input instead of fuzzing the outer reader alone.
private let verifier = AppReceiptVerifier(roots: fuzzRoots())

private func fuzzRoots() -> TrustedRoots {
    guard let path = ProcessInfo.processInfo.environment["FUZZ_APP_RECEIPT_ROOT"], !path.isEmpty else {
        fatalError("FuzzAppReceipt: FUZZ_APP_RECEIPT_ROOT is unset: name the test root (scripts/fuzz does)")
    }
    do {
        return try TrustedRoots(pemFile: path)
    } catch {
        fatalError("FuzzAppReceipt: FUZZ_APP_RECEIPT_ROOT \(path) holds no usable root: \(error)")
    }
}

/// How the inputs ended, by `AppReceiptError` case or "verified"; printed at
/// exit, so that scripts/fuzz can check the signature was reached (inputs
/// verified and inputs refused for their signature). libFuzzer runs one input
/// at a time.
nonisolated(unsafe) private var outcomes: [String: Int] = [:]
private let printOutcomesAtExit: Void = {
    atexit {
        let counts = outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("FuzzAppReceipt outcomes: \(counts)")
    }
}()

/// Any bytes as an app receipt (malformed DER and BER, deep nesting, huge
/// lengths, truncation): checked and inspected. A verified receipt must be
/// consistent with itself; nothing may crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppReceipt(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = printOutcomesAtExit
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let inspection = verifier.inspect(bytes)
    switch inspection.verdict {
    case .success(let verified):
        precondition(verified.payload == inspection.payload, "inspection and verification read different payloads")
        precondition(verified.receipt.inApp.count == verified.payload.purchases.count, "a purchase lost on the way")
        precondition(verified.reply.environment == verified.environment.rawValue)
        outcomes["verified", default: 0] += 1
    case .failure(let error):
        outcomes[error.rawValue, default: 0] += 1
    }
    return 0
}
