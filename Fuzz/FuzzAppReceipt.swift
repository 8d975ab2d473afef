// Linked with the IAPCore, SignedData and AppReceipt modules scripts/fuzz compiles with coverage.
import AppReceipt
import Crypto
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

/// The CPU an input may cost, by its size: five times what a real receipt
/// costs (FUZZ_APP_RECEIPT_REFERENCE, the seed a good receipt, inspected by a
/// new verifier: its chain validated), plus, per byte, twenty times a SHA-256
/// of it: a receipt's digest is the only work that has to grow with its
/// bytes. BER that a parser turns into many nodes (half a million empty
/// pieces cost 0.2 µs a byte, three hundred times a digest) exceeds it; so
/// does any other work growing faster than the input.
private struct CPUBudget {
    let fixedSeconds: Double
    let perByteSeconds: Double

    init() {
        guard let path = ProcessInfo.processInfo.environment["FUZZ_APP_RECEIPT_REFERENCE"],
              let reference = FileManager.default.contents(atPath: path).map(Array.init)
        else { fatalError("FuzzAppReceipt: FUZZ_APP_RECEIPT_REFERENCE names no readable receipt (scripts/fuzz sets it)") }
        let roots = fuzzRoots()
        fixedSeconds = 5 * Self.median { _ = AppReceiptVerifier(roots: roots).inspect(reference) }
        let megabyte = [UInt8](repeating: 0x5A, count: 1 << 20)
        perByteSeconds = 20 * Self.median { _ = SHA256.hash(data: megabyte) } / Double(megabyte.count)
        FileHandle.standardError.write(Data(
            "FuzzAppReceipt CPU budget: \(Int(fixedSeconds * 1e6)) µs + \(String(format: "%.2f", perByteSeconds * 1e9)) ns a byte\n".utf8))
    }

    func seconds(forBytes count: Int) -> Double {
        fixedSeconds + perByteSeconds * Double(count)
    }

    static func median(of runs: Int = 9, _ body: () -> Void) -> Double {
        (0..<runs).map { _ in cpuSeconds(body) }.sorted()[runs / 2]
    }
}

/// The CPU time of this thread that `body` takes.
private func cpuSeconds(_ body: () -> Void) -> Double {
    func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
    let start = now()
    body()
    return now() - start
}

private let budget = CPUBudget()

/// Any bytes as an app receipt (malformed DER and BER, deep nesting, huge
/// lengths, truncation): checked and inspected within its CPU budget. A
/// verified receipt must be consistent with itself; nothing may crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppReceipt(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = printOutcomesAtExit
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var inspection: AppReceiptInspection!
    let allowed = budget.seconds(forBytes: size)
    // Up to three runs: one slowed by the machine is not an amplification.
    var least = Double.infinity
    for _ in 0..<3 where least > allowed {
        least = min(least, cpuSeconds { inspection = verifier.inspect(bytes) })
    }
    guard least <= allowed else {
        fatalError("FuzzAppReceipt: \(size) bytes cost \(Int(least * 1e6)) µs of CPU, more than their budget of "
            + "\(Int(allowed * 1e6)) µs three times: an amplification")
    }
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
