// The cost of verifying one StoreKit 2 JWS, on the fixtures of Tests/SignedDataTests:
//   cold    a new verifier each time: path validation (DER parses, two ECDSA checks of the chain) + ES256
//   cached  one verifier: the (leaf, intermediate) pair known, so the header's decoding and one ES256 check
//   refused an untrusted chain and a forged signature, to the same verifier, and forged JWS each under a
//           header never seen (a member added) that names the cached chain, as a flood of the cache would
//           send them
// and, for the path validation alone, how swift-certificates' async `Verifier.validate` is reached from a
// plain thread: on that thread (CallingThreadExecutor, what SignedDataVerifier does) or handed to Swift's
// cooperative pool and waited for with a semaphore. Last, the receipts' SHA-256 (swift-crypto) of a
// receipt of typical size.
//
// Usage: swift run -c release signed-data-bench [FIXTURES_DIR] [ROUNDS]
import Crypto
import Dispatch
import Foundation
import IAPCore
import SignedData
import X509

let arguments = CommandLine.arguments
let fixtures = arguments.count > 1 ? arguments[1] : "Tests/SignedDataTests/Fixtures"
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 2000 : 2000

func read(_ name: String) -> String {
    guard let text = try? String(contentsOfFile: fixtures + "/" + name, encoding: .utf8) else {
        FileHandle.standardError.write(Data("signed-data-bench: cannot read \(fixtures)/\(name)\n".utf8))
        exit(2)
    }
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

let jws = Array(read("good.jws").utf8)
let roots = try TrustedRoots(pem: read("signing-root.pem"))

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
    let line = "\(name): \(String(format: "%.1f", wallMicros / Double(count))) µs wall, "
        + "\(String(format: "%.1f", cpuMicros / Double(count))) µs CPU per call (\(count) calls)"
    print(line)
}

let coldRounds = max(1, rounds / 10)
try measure("verify cold (new verifier)", coldRounds) {
    _ = try SignedDataVerifier(roots: roots).verifyTransaction(jws)
}
let warm = SignedDataVerifier(roots: roots)
_ = try warm.verifyTransaction(jws)
try measure("verify cached (known pair)", rounds) {
    _ = try warm.verifyTransaction(jws)
}

// What refusals cost: nothing refused is cached.
let goodParts = read("good.jws").split(separator: ".").map(String.init)
func base64URLDecoded(_ text: String) -> Data {
    Data(base64Encoded: text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        .padding(toLength: (text.count + 3) / 4 * 4, withPad: "=", startingAt: 0))!
}
let goodHeader = try JSONSerialization.jsonObject(with: base64URLDecoded(goodParts[0])) as! [String: Any]
let newHeaders = try (0..<coldRounds).map { index -> [UInt8] in
    var header = goodHeader
    header["kid"] = "k\(index)"
    let encoded = try JSONSerialization.data(withJSONObject: header).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
    return Array((encoded + "." + goodParts[1] + "." + goodParts[2]).utf8)
}
var nextHeader = 0
measure("refused, badSignature, a new header naming the cached chain", coldRounds) {
    defer { nextHeader += 1 }
    do {
        _ = try warm.verifyTransaction(newHeaders[nextHeader])
        preconditionFailure("a forged header verified")
    } catch {
        precondition(error as? SignedDataError == .badSignature)
    }
}
for (fixture, reason) in [("untrusted.jws", SignedDataError.untrustedChain), ("forged.jws", .badSignature)] {
    let refused = Array(read(fixture).utf8)
    measure("refused, \(reason)", coldRounds) {
        do {
            _ = try warm.verifyTransaction(refused)
            preconditionFailure("\(fixture) verified")
        } catch {
            precondition(error as? SignedDataError == reason)
        }
    }
}

// The path validation alone, both ways of calling it from a thread that is not in the pool.
let chain = (goodHeader["x5c"] as! [String]).map { try! Certificate(derEncoded: Array(Data(base64Encoded: $0)!)) }
let store = CertificateStore(roots.certificates)
@Sendable func validate() async -> Bool {
    var verifier = Verifier(rootCertificates: store) { RFC5280Policy() }
    if case .validCertificate = await verifier.validate(leaf: chain[0], intermediates: CertificateStore([chain[1]])) {
        return true
    }
    return false
}
measure("path validation on the calling thread (CallingThreadExecutor)", coldRounds) {
    precondition(CallingThreadExecutor.run(validate))
}
measure("path validation in the cooperative pool + semaphore", coldRounds) {
    let done = DispatchSemaphore(value: 0)
    let valid = ManagedAtomicFlag()
    Task.detached {
        if await validate() { valid.set() }
        done.signal()
    }
    done.wait()
    precondition(valid.value)
}

let receipt = (0..<6_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
measure("receipt SHA-256, 6 kB (swift-crypto)", rounds * 10) {
    precondition(SHA256.hexDigest(receipt).utf8.count == 64)
}

/// A flag a task sets and the waiting thread reads after the semaphore.
final class ManagedAtomicFlag: @unchecked Sendable {
    private(set) var value = false
    func set() { value = true }
}
