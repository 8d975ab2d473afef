import AppReceipt
import ArgumentParser
import Foundation
import IAPCore
import IAPService
import SignedData

/// `iapctl receipt FILE|-`: decodes and checks an app receipt as the local
/// verifier does (`IAP_RECEIPT_VERIFIER=local`), and prints its fields, its
/// certificates and the verdict, for support staff with a player's receipt in
/// hand. Reads no database and calls no one.
struct CheckReceipt: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Decode and check an app receipt as the local verifier does.",
        discussion: "FILE holds the receipt as base64 (as apps post it; line breaks allowed) or as raw DER/BER;"
            + " - reads standard input. The roots are IAP_APPLE_RECEIPT_ROOT_FILE's, else Apple Inc. Root CA."
            + " Exits 0 when the receipt is valid, 1 when it is not.")

    @Argument(help: "The receipt's file, or - for standard input.")
    var file: String

    func run() throws {
        guard let input = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: file)
        else { throw ValidationError("cannot read \(file)") }
        guard let receipt = Self.decoded(Array(input)) else {
            throw ValidationError("\(file) is neither base64 nor DER/BER")
        }
        if AppleReceipt.Format.of(receipt) == .transactionReceipt {
            print("an iOS 6 transaction receipt: only Apple's verifyReceipt can check it")
            throw ExitCode(1)
        }
        let inspection = AppReceiptVerifier(roots: try Self.roots()).inspect(receipt)
        print(ReceiptReport(inspection).lines.joined(separator: "\n"))
        if case .failure = inspection.verdict { throw ExitCode(1) }
    }

    /// The receipt's bytes: raw DER/BER (a SEQUENCE, 0x30) as they are, else
    /// base64 with spaces and line breaks dropped.
    static func decoded(_ input: [UInt8]) -> [UInt8]? {
        if input.first == 0x30 { return input }
        let text = input.filter { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard let bytes = Base64.decode(String(decoding: text, as: UTF8.self)), !bytes.isEmpty else { return nil }
        return bytes
    }

    /// `IAP_APPLE_RECEIPT_ROOT_FILE`, as the service reads it, else Apple Inc. Root CA.
    private static func roots() throws -> TrustedRoots {
        guard let path = ProcessEnvironment.variables()["IAP_APPLE_RECEIPT_ROOT_FILE"], !path.isEmpty else {
            return .appleReceipts
        }
        do {
            return try TrustedRoots(pemFile: path)
        } catch {
            throw ValidationError("IAP_APPLE_RECEIPT_ROOT_FILE: \(path) is not a readable PEM of certificates (\(error))")
        }
    }
}

/// The lines `iapctl receipt` prints: a name column and a value.
struct ReceiptReport {
    private(set) var lines: [String] = []

    init(_ inspection: AppReceiptInspection) {
        if let payload = inspection.payload {
            row("environment", payload.environmentName ?? "(none)")
            row("bundle id", payload.bundleID)
            row("app version", payload.applicationVersion ?? "(none)")
            row("original version", payload.originalApplicationVersion ?? "(none)")
            row("creation date", AppleDate.iso8601(ms: payload.creationDateMs))
        } else {
            row("payload", "unreadable")
        }
        for (index, certificate) in inspection.certificates.enumerated() {
            row("certificate \(index + 1)", certificate.subject)
            row("  issuer", certificate.issuer)
            row("  key", certificate.key)
            row("  signature", certificate.signatureAlgorithm)
            row("  valid", "\(AppleDate.iso8601(ms: certificate.notValidBeforeMs)) to \(AppleDate.iso8601(ms: certificate.notValidAfterMs))")
        }
        let purchases = inspection.payload?.purchases ?? []
        row("purchases", String(purchases.count))
        for (index, purchase) in purchases.enumerated() {
            var text = "\(purchase.transactionID) \(purchase.productID) x\(purchase.quantity)"
            text += " purchased " + (purchase.purchaseDateMs.map(AppleDate.iso8601(ms:)) ?? "(no date)")
            if let original = purchase.originalTransactionID, original != purchase.transactionID {
                text += ", original \(original)"
            }
            if let expires = purchase.expiresDateMs { text += ", expires \(AppleDate.iso8601(ms: expires))" }
            if let cancelled = purchase.cancellationDateMs { text += ", CANCELLED \(AppleDate.iso8601(ms: cancelled))" }
            row("  \(index + 1)", text)
        }
        switch inspection.verdict {
        case .success(let verified): row("verdict", "valid (\(verified.environment.rawValue))")
        case .failure(let check): row("verdict", "NOT VALID: \(check.rawValue)")
        }
    }

    private mutating func row(_ name: String, _ value: String) {
        lines.append(name.padding(toLength: 19, withPad: " ", startingAt: 0) + value)
    }
}
