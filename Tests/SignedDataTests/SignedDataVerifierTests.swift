import Foundation
import IAPCore
import SignedData
import XCTest

/// docs/api.md "POST /v1/transactions/verify" step 2, check by check, on JWS
/// signed with the test PKI by another implementation (Fixtures/regenerate):
/// one good transaction and every bad input of issue 11, each refused with its
/// own reason.
final class SignedDataVerifierTests: XCTestCase {
    typealias Fixtures = SignedDataFixtures

    private func verifier(trusting pem: String = Fixtures.testRootPEM) -> SignedDataVerifier {
        SignedDataVerifier(roots: try! TrustedRoots(pem: pem))
    }

    private func assertRefused(
        _ jws: String, _ reason: SignedDataError, by verifier: SignedDataVerifier? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try (verifier ?? self.verifier()).verifyTransaction(Array(jws.utf8)), file: file, line: line) {
            XCTAssertEqual($0 as? SignedDataError, reason, file: file, line: line)
        }
    }

    func testGoodTransactionVerifiesAndDecodes() throws {
        let jws = Fixtures.jws("good")
        let transaction = try verifier().verifyTransaction(Array(jws.utf8))
        XCTAssertEqual(transaction.transactionID, "2000000123456789")
        XCTAssertEqual(transaction.productID, "com.example.game.gems100")
        XCTAssertEqual(transaction.bundleID, "com.example.game")
        XCTAssertEqual(transaction.appAccountToken, "6f9619ff-8b86-4d01-b42d-00c04fc964ff")
        XCTAssertEqual(transaction.environment, "Production")
        XCTAssertEqual(transaction.quantity, 1)
        XCTAssertNil(transaction.revocationDate)
        XCTAssertEqual(transaction.payload, Fixtures.payload(jws), "Apple's payload is kept byte for byte")
    }

    func testTwoPartsAreMalformed() {
        let parts = Fixtures.parts(Fixtures.jws("good"))
        assertRefused(parts[0] + "." + parts[1], .malformed)
        assertRefused(parts.joined(separator: ".") + ".", .malformed)
    }

    func testBadBase64URLIsMalformed() {
        let parts = Fixtures.parts(Fixtures.jws("good"))
        assertRefused([parts[0], parts[1] + "*", parts[2]].joined(separator: "."), .malformed)
        // Standard base64 and padding are not base64url.
        assertRefused([parts[0], parts[1], parts[2] + "="].joined(separator: "."), .malformed)
        assertRefused([parts[0], "+" + parts[1].dropFirst(), parts[2]].joined(separator: "."), .malformed)
        assertRefused([parts[0], "/" + parts[1].dropFirst(), parts[2]].joined(separator: "."), .malformed)
    }

    func testAlgNoneAndHS256AreRefused() {
        let good = Fixtures.jws("good")
        assertRefused(Fixtures.settingHeader("alg", to: .string("none"), in: good), .unsupportedAlgorithm)
        assertRefused(Fixtures.settingHeader("alg", to: .string("HS256"), in: good), .unsupportedAlgorithm)
        assertRefused(Fixtures.settingHeader("alg", to: .string("ES384"), in: good), .unsupportedAlgorithm)
        // alg none with the signature dropped, as an attacker would send it.
        let unsigned = Fixtures.parts(Fixtures.settingHeader("alg", to: .string("none"), in: good))
        assertRefused(unsigned[0] + "." + unsigned[1] + ".", .malformed)
    }

    func testTwoCertificatesAreRefused() {
        let good = Fixtures.jws("good")
        let x5c = Fixtures.header(good)["x5c"]!.arrayValue!
        assertRefused(Fixtures.settingHeader("x5c", to: .array(Array(x5c.prefix(2))), in: good), .wrongCertificateCount)
        assertRefused(Fixtures.settingHeader("x5c", to: .array(x5c + [x5c[2]]), in: good), .wrongCertificateCount)
    }

    func testChainToARootNotConfiguredIsUntrusted() {
        assertRefused(Fixtures.jws("untrusted"), .untrustedChain)
        // The good chain, when only the other root is trusted, and Apple's real root alone.
        assertRefused(Fixtures.jws("good"), .untrustedChain, by: verifier(trusting: Fixtures.untrustedRootPEM))
        assertRefused(Fixtures.jws("good"), .untrustedChain, by: SignedDataVerifier(roots: .apple))
    }

    func testAnyConfiguredRootAnchors() throws {
        let both = verifier(trusting: Fixtures.untrustedRootPEM + "\n" + Fixtures.testRootPEM)
        XCTAssertNoThrow(try both.verifyTransaction(Array(Fixtures.jws("good").utf8)))
        XCTAssertNoThrow(try both.verifyTransaction(Array(Fixtures.jws("untrusted").utf8)))
    }

    func testIntermediateWithoutItsOIDIsRefused() {
        assertRefused(Fixtures.jws("intermediate-without-oid"), .missingMarkerOID)
    }

    func testLeafWithoutItsOIDIsRefused() {
        assertRefused(Fixtures.jws("leaf-without-oid"), .missingMarkerOID)
    }

    func testCertificateExpiredAtSignedDateIsRefused() {
        assertRefused(Fixtures.jws("expired-leaf"), .expiredAtSignedDate)
    }

    func testSignedDateOutsideTheChainsValidityIsRefusedEvenWhenCached() throws {
        let verifier = verifier()
        let good = Fixtures.jws("good")
        _ = try verifier.verifyTransaction(Array(good.utf8))
        XCTAssertEqual(verifier.cachedChainCount, 1)
        // Payloads re-signed are not possible here, so the date is changed and the signature fails
        // after the date check: the date check must come first and say so.
        for signedDate in ["1000", "99999999999999"] {
            let payload = String(decoding: Fixtures.payload(good), as: UTF8.self)
                .replacingOccurrences(of: #""signedDate":\d+"#, with: "\"signedDate\":\(signedDate)",
                                      options: .regularExpression)
            assertRefused(Fixtures.replacingPayload(of: good, with: Array(payload.utf8)), .expiredAtSignedDate,
                          by: verifier)
        }
    }

    func testSignatureByAnotherKeyIsRefused() {
        assertRefused(Fixtures.jws("forged"), .badSignature)
    }

    func testPayloadChangedAfterSigningIsRefused() {
        let good = Fixtures.jws("good")
        let payload = String(decoding: Fixtures.payload(good), as: UTF8.self)
            .replacingOccurrences(of: "com.example.game.gems100", with: "com.example.game.gems999")
        assertRefused(Fixtures.replacingPayload(of: good, with: Array(payload.utf8)), .badSignature)
    }

    func testSignatureNot64BytesIsRefused() {
        let parts = Fixtures.parts(Fixtures.jws("good"))
        let short = Fixtures.base64URL(Array(Base64.decodeURL(ArraySlice(parts[2].utf8))!.dropLast()))
        assertRefused([parts[0], parts[1], short].joined(separator: "."), .badSignature)
    }

    func testPayloadWithoutSignedDateIsInvalid() {
        let good = Fixtures.jws("good")
        let payload = String(decoding: Fixtures.payload(good), as: UTF8.self)
            .replacingOccurrences(of: "\"signedDate\"", with: "\"signed\"")
        assertRefused(Fixtures.replacingPayload(of: good, with: Array(payload.utf8)), .invalidPayload)
        assertRefused(Fixtures.replacingPayload(of: good, with: Array("[1]".utf8)), .invalidPayload)
    }

    func testX5cThatIsNotBase64DERIsMalformed() {
        let good = Fixtures.jws("good")
        let x5c = Fixtures.header(good)["x5c"]!.arrayValue!
        assertRefused(Fixtures.settingHeader("x5c", to: .array([.string("bm90IGEgY2VydA=="), x5c[1], x5c[2]]), in: good),
                      .malformed)
        assertRefused(Fixtures.settingHeader("x5c", to: .array([.number("1"), x5c[1], x5c[2]]), in: good), .malformed)
        assertRefused(Fixtures.settingHeader("x5c", to: .string("x"), in: good), .malformed)
    }

    func testTheX5cRootIsNotTrustedForBeingThere() {
        // The untrusted chain names its own root in x5c: that root must not anchor anything.
        assertRefused(Fixtures.jws("untrusted"), .untrustedChain)
    }

    func testAKnownPairIsCachedOnce() throws {
        let verifier = verifier()
        for _ in 0..<3 {
            _ = try verifier.verifyTransaction(Array(Fixtures.jws("good").utf8))
        }
        XCTAssertEqual(verifier.cachedChainCount, 1)
        assertRefused(Fixtures.jws("forged"), .badSignature, by: verifier)
        assertRefused(Fixtures.jws("untrusted"), .untrustedChain, by: verifier)
        XCTAssertEqual(verifier.cachedChainCount, 1, "refusals are not cached")
    }

    // Issue 23, item 3: only a chain whose leaf signed the JWS is cached, under its certificates' DER.

    func testForgedJWSNeitherEvictAGoodChainNorCostMoreThanOneValidation() throws {
        let capacity = 4
        let verifier = SignedDataVerifier(roots: try TrustedRoots(pem: Fixtures.testRootPEM), cacheCapacity: capacity)
        let good = Array(Fixtures.jws("good").utf8)
        _ = try verifier.verifyTransaction(good)
        XCTAssertEqual(verifier.pathValidationCount, 1)
        // Good's certificates under headers never seen: one ECDSA check each, no path validation.
        for jws in Self.headersNamingGoodsChain(3 * capacity) {
            assertRefused(jws, .badSignature, by: verifier)
        }
        XCTAssertEqual(verifier.pathValidationCount, 1, "a known chain is not validated again, whatever the header's bytes")
        // Other chains: at most one path validation each.
        let others = Self.withHeaderMember(Fixtures.jws("untrusted"), count: 2 * capacity)
            + Self.withHeaderMember(Fixtures.jws("expired-leaf"), count: capacity) + [Self.randomLeaf(of: Fixtures.jws("good"))]
        for jws in others {
            let before = verifier.pathValidationCount
            XCTAssertThrowsError(try verifier.verifyTransaction(Array(jws.utf8)))
            XCTAssertLessThanOrEqual(verifier.pathValidationCount - before, 1)
        }
        XCTAssertEqual(verifier.cachedChainCount, 1, "nothing refused was cached")
        let before = verifier.pathValidationCount
        _ = try verifier.verifyTransaction(good)
        XCTAssertEqual(verifier.pathValidationCount, before, "good's chain is still cached")
    }

    func testAHeaderSeenBeforeStillHasItsJWSSignatureChecked() throws {
        // The header's exact bytes are cached once a JWS under them verified; a payload changed
        // under the same header is refused by its signature, with no path validation and no entry.
        let verifier = verifier()
        let good = Fixtures.jws("good")
        _ = try verifier.verifyTransaction(Array(good.utf8))
        let payload = String(decoding: Fixtures.payload(good), as: UTF8.self)
            .replacingOccurrences(of: "\"quantity\":1", with: "\"quantity\":100")
        XCTAssertNotEqual(Array(payload.utf8), Fixtures.payload(good), "the payload was changed")
        for _ in 0..<3 {
            assertRefused(Fixtures.replacingPayload(of: good, with: Array(payload.utf8)), .badSignature, by: verifier)
        }
        XCTAssertEqual(verifier.pathValidationCount, 1)
        XCTAssertEqual(verifier.cachedChainCount, 1)
        _ = try verifier.verifyTransaction(Array(good.utf8))
    }

    func testAValidChainWithABadSignatureLeavesNoEntry() throws {
        let verifier = verifier()
        assertRefused(Fixtures.jws("forged"), .badSignature, by: verifier)  // good's chain, another key's signature
        XCTAssertEqual(verifier.cachedChainCount, 0)
        XCTAssertNil(verifier.latestLeafLifetime, "a chain that signed nothing is not Apple's current leaf")
        assertRefused(Fixtures.jws("forged"), .badSignature, by: verifier)
        XCTAssertEqual(verifier.pathValidationCount, 2, "validated again: still not cached")
        _ = try verifier.verifyTransaction(Array(Fixtures.jws("good").utf8))
        XCTAssertEqual(verifier.pathValidationCount, 3)
        XCTAssertEqual(verifier.cachedChainCount, 1)
        XCTAssertNotNil(verifier.latestLeafLifetime)
        // Expired at signedDate: the signature was never checked, so nothing is cached either.
        let expiredOnly = self.verifier()
        assertRefused(Fixtures.jws("expired-leaf"), .expiredAtSignedDate, by: expiredOnly)
        XCTAssertEqual(expiredOnly.cachedChainCount, 0)
    }

    func testHeadersOfOtherBytesNamingTheSameCertificatesShareAnEntry() throws {
        let verifier = verifier()
        let good = try verifier.verifyTransaction(Array(Fixtures.jws("good").utf8))
        // The same payload and leaf, under `{"x5c": [...], "alg": ...}` with spaces and newlines.
        let respaced = Fixtures.jws("good-respaced")
        XCTAssertNotEqual(Fixtures.parts(respaced)[0], Fixtures.parts(Fixtures.jws("good"))[0])
        XCTAssertEqual(try verifier.verifyTransaction(Array(respaced.utf8)).transactionID, good.transactionID)
        XCTAssertEqual(verifier.cachedChainCount, 1)
        XCTAssertEqual(verifier.pathValidationCount, 1)
    }

    func testTheCacheIsBounded() throws {
        let bothRoots = try TrustedRoots(pem: Fixtures.testRootPEM + "\n" + Fixtures.untrustedRootPEM)
        let verifier = SignedDataVerifier(roots: bothRoots, cacheCapacity: 2)
        for name in ["good", "good-respaced", "untrusted", "good"] {
            _ = try verifier.verifyTransaction(Array(Fixtures.jws(name).utf8))
            XCTAssertLessThanOrEqual(verifier.cachedChainCount, 2)
        }
        XCTAssertEqual(verifier.cachedChainCount, 2)
        XCTAssertEqual(verifier.pathValidationCount, 2, "two chains, each validated once")
        for jws in Self.headersNamingGoodsChain(10) + Self.withHeaderMember(Fixtures.jws("untrusted"), count: 10) {
            XCTAssertThrowsError(try verifier.verifyTransaction(Array(jws.utf8)))
            XCTAssertEqual(verifier.cachedChainCount, 2)
        }
        // Full: a third chain pushes out the one used least recently.
        let one = SignedDataVerifier(roots: bothRoots, cacheCapacity: 1)
        for name in ["good", "untrusted", "good"] {
            _ = try one.verifyTransaction(Array(Fixtures.jws(name).utf8))
            XCTAssertEqual(one.cachedChainCount, 1)
        }
        XCTAssertEqual(one.pathValidationCount, 3)
    }

    /// `good` under `count` headers of other bytes naming its leaf and intermediate, as an attacker
    /// would send them to push the chain out of a cache keyed on the header: `x5c`'s root slot
    /// (which plays no part) holding other bytes, or a member added; good's signature, which no
    /// longer matches.
    private static func headersNamingGoodsChain(_ count: Int) -> [String] {
        let good = Fixtures.jws("good")
        let x5c = Fixtures.header(good)["x5c"]!.arrayValue!
        return (0..<count).map { index in
            guard index.isMultiple(of: 2) else { return withHeaderMember(good, count: index + 1).last! }
            let junk = Data((0..<48).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }).base64EncodedString()
            return Fixtures.settingHeader("x5c", to: .array([x5c[0], x5c[1], .string(junk)]), in: good)
        }
    }

    /// `jws` with a header member `kid` added, `count` values.
    private static func withHeaderMember(_ jws: String, count: Int) -> [String] {
        (0..<count).map { index in
            var header = Fixtures.header(jws)
            header.members.append((key: "kid", value: .string("k\(index)")))
            return Fixtures.replacingHeader(of: jws, with: header)
        }
    }

    /// `jws` with bytes that are no certificate as its leaf.
    private static func randomLeaf(of jws: String) -> String {
        let x5c = Fixtures.header(jws)["x5c"]!.arrayValue!
        let junk = Data((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 13) }).base64EncodedString()
        return Fixtures.settingHeader("x5c", to: .array([.string(junk), x5c[1], x5c[2]]), in: jws)
    }

    func testVerifiesFromSeveralThreadsAtOnce() {
        let verifier = verifier()
        let jwsList = ["good", "forged", "untrusted", "expired-leaf"].map { Array(Fixtures.jws($0).utf8) }
        let outcomes = Locked([String](repeating: "", count: 64))
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let outcome: String
            do {
                _ = try verifier.verifyTransaction(jwsList[index % jwsList.count])
                outcome = "ok"
            } catch {
                outcome = "\(error)"
            }
            outcomes.set(index, outcome)
        }
        let expected = ["ok", "badSignature", "untrustedChain", "expiredAtSignedDate"]
        XCTAssertEqual(outcomes.value, (0..<64).map { expected[$0 % 4] })
    }
}

/// An array written from several threads, one index each.
private final class Locked: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String]

    init(_ values: [String]) {
        self.values = values
    }

    func set(_ index: Int, _ value: String) {
        lock.withLock { values[index] = value }
    }

    var value: [String] {
        lock.withLock { values }
    }
}
