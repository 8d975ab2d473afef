// The cost of checking one app receipt here, on the fixtures of Tests/AppReceiptTests:
//   cold    a new verifier each time: path validation (certificate parses, two RSA checks of the chain)
//           + the receipt's RSA signature + its payload
//   cached  one verifier: the receipt's certificates known, so its structure, one RSA check and the payload
// for a receipt of one purchase and one of 200, and a refused one (a bad signature under a cached chain).
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

/// Wall and CPU µs per call of `body`, over `count` calls.
func measure(_ name: String, _ count: Int, _ body: () throws -> Void) rethrows {
    var cpuStart = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuStart)
    let start = ContinuousClock.now
    for _ in 0..<count { try body() }
    let wall = ContinuousClock.now - start
    var cpuEnd = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpuEnd)
    let wallMicros = Double(wall.components.seconds) * 1e6 + Double(wall.components.attoseconds) / 1e12
    let cpuMicros = Double(cpuEnd.tv_sec - cpuStart.tv_sec) * 1e6 + Double(cpuEnd.tv_nsec - cpuStart.tv_nsec) / 1e3
    print("\(name): \(String(format: "%.1f", wallMicros / Double(count))) µs wall, "
        + "\(String(format: "%.1f", cpuMicros / Double(count))) µs CPU per call (\(count) calls)")
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
try measure("verify cached, 1 purchase", rounds) {
    _ = try warm.verify(receipt)
}
try measure("verify cached, 200 purchases", max(1, rounds / 20)) {
    _ = try warm.verify(many)
}
measure("refused (badSignature), cached chain", rounds) {
    _ = try? warm.verify(forged)
}
