// The cost of checking one app receipt here, on the fixtures of Tests/AppReceiptTests:
//   cold    a new verifier each time: path validation (certificate parses, two RSA checks of the chain)
//           + the receipt's RSA signature + its payload
//   cached  one verifier: the receipt's certificates known, so its structure, one RSA check and the payload
// for a receipt of one purchase and one of 200, and a refused one (a bad signature under a cached chain);
// then receipts crafted to cost the most before any signature or chain check (`CraftedReceipts`), each as
// large as a verify request carries (`receipt_data` is at most 1,400,000 base64 characters, within nginx's
// 2 MiB body), against the cached real receipt: in all and per byte.
// Figures are medians of each call's CPU time (and wall time) on this thread.
//
// Usage: swift run -c release app-receipt-bench [FIXTURES_DIR] [ROUNDS]
import AppReceipt
import Foundation
import SignedData

let arguments = CommandLine.arguments
let fixtures = arguments.count > 1 ? arguments[1] : "Tests/AppReceiptTests/Fixtures"
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 2000 : 2000

func read(_ name: String) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: fixtures + "/" + name) else {
        FileHandle.standardError.write(Data("app-receipt-bench: cannot read \(fixtures)/\(name)\n".utf8))
        exit(2)
    }
    return Array(data)
}

func threadCPUMicros() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1e6 + Double(now.tv_nsec) / 1e3
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// Prints the median wall and CPU µs of one call of `body`, over `count`
/// calls; returns the CPU median.
@discardableResult
func measure(_ name: String, _ count: Int, _ body: () throws -> Void) rethrows -> Double {
    var cpu: [Double] = []
    var wall: [Double] = []
    for _ in 0..<count {
        let cpuStart = threadCPUMicros()
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        cpu.append(threadCPUMicros() - cpuStart)
        wall.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
    }
    let cpuMedian = median(cpu)
    print("\(name): \(String(format: "%.1f", median(wall))) µs wall, \(String(format: "%.1f", cpuMedian)) µs CPU "
        + "per call (medians of \(count) calls)")
    return cpuMedian
}

let roots = try TrustedRoots(pemFile: fixtures + "/root.pem")
let receipt = read("production-sha256.der")
let many = read("two-hundred-purchases.der")
let forged = read("bad-signature.der")

try measure("verify cold (new verifier), 1 purchase", max(1, rounds / 10)) {
    _ = try AppReceiptVerifier(roots: roots).verify(receipt)
}
let warm = AppReceiptVerifier(roots: roots)
_ = try warm.verify(receipt)
let real = try measure("verify cached, 1 purchase", rounds) {
    _ = try warm.verify(receipt)
}
try measure("verify cached, 200 purchases", max(1, rounds / 20)) {
    _ = try warm.verify(many)
}
measure("refused (badSignature), cached chain", rounds) {
    _ = try? warm.verify(forged)
}

let limit = CraftedReceipts.bodyLimitBytes
let calls = max(5, rounds / 200)
/// Each a few variants, one per call: padded alike, a receipt would find the chain its first copy cached.
let copies = CraftedReceipts.certificateCopies(receipt, fitting: limit)
let copiesOfTheSet = (copies.count - receipt.count) / (CraftedReceipts.certificateCopies(receipt, copies: 2).count - receipt.count) + 1
/// The most NULLs a real receipt's CRLs field takes below the bound on nodes, found by trying.
let nullsWithinBounds = stride(from: 1024, to: 0, by: -8).first {
    (try? warm.verify(CraftedReceipts.nulls(receipt, count: $0))) != nil
} ?? 0
/// `hashedWhole`: a copy of a real chain and signer, so that the receipt gets as far as its signature,
/// whose digest is of all its content.
let crafted: [(name: String, variants: [[UInt8]], hashedWhole: Bool)] = [
    ("empty BER pieces, no signature", [CraftedReceipts.emptyPieces(fitting: limit)], false),
    ("copies of a real receipt's certificates",
     (0..<calls).map { CraftedReceipts.certificateCopies(receipt, copies: copiesOfTheSet - $0) }, false),
    ("a real receipt's CRLs field full of NULLs", [CraftedReceipts.nulls(receipt, count: (limit - receipt.count) / 2)], false),
    ("a real receipt's CRLs field with NULLs up to the bound on nodes",
     [CraftedReceipts.nulls(receipt, count: nullsWithinBounds)], false),
    ("the same in BER (indefinite lengths), parsed whole",
     [CraftedReceipts.nulls(receipt, count: nullsWithinBounds, indefinite: true)], false),
    ("a real receipt's content in one-byte pieces (200 purchases)", [CraftedReceipts.contentInOneBytePieces(many)], false),
    ("a real chain and signer over other content", [CraftedReceipts.otherContent(receipt, fitting: limit)], true),
]
func format(_ value: Double) -> String { String(format: "%.1f", value) }
var worst: (name: String, cpu: Double, bytes: Int) = ("", 0, 1)
var worstBeforeSignature: (name: String, cpu: Double) = ("", 0)
for (name, variants, hashedWhole) in crafted {
    let outcome: String
    do {
        _ = try AppReceiptVerifier(roots: roots).verify(variants[0])
        outcome = "accepted"
    } catch {
        outcome = error.rawValue
    }
    var next = 0
    let cpu = measure("crafted: \(name), \(variants[0].count) bytes, \(outcome)", calls) {
        _ = try? warm.verify(variants[next % variants.count])
        next += 1
    }
    if cpu > worst.cpu { worst = (name, cpu, variants[0].count) }
    if !hashedWhole, cpu > worstBeforeSignature.cpu { worstBeforeSignature = (name, cpu) }
}
print("worst crafted receipt a request carries: \(format(worst.cpu)) µs CPU (\(worst.name)), "
    + "\(format(worst.cpu / real))x a real one's \(format(real)) µs; per byte \(String(format: "%.2f", worst.cpu * 1000 / Double(worst.bytes))) ns, "
    + "\(String(format: "%.3f", (worst.cpu / Double(worst.bytes)) / (real / Double(receipt.count))))x a real one's")
print("worst crafted receipt that does not get a real chain's signature check: \(format(worstBeforeSignature.cpu)) µs CPU "
    + "(\(worstBeforeSignature.name)), \(format(worstBeforeSignature.cpu / real))x a real one's")
