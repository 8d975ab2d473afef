// Linked with the IAPCore module scripts/fuzz compiles with coverage (testable: internal types too).
import Crypto
@testable import IAPCore

/// Request bodies, query strings and paths, as a client may send them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let request = try? VerifyRequest.parse(body: bytes) {
        // What is stored and sent to Apple is already normal, and decodes to the bytes that were hashed.
        let receipt = request.receipt
        precondition((try? ReceiptData.normalise(receipt.base64)) == receipt, "normalised base64 is not normal")
        let decoded = Base64.decode(receipt.base64)
        precondition(decoded.map { SHA256.hexDigest($0) } == receipt.sha256Hex, "SHA-256 is not of the stored bytes")
        precondition(request.receipt.sha256Hex.utf8.count == 64, "SHA-256 is not 64 hex digits")
        precondition(request.orderID != nil || request.userID != nil, "a user is required")
    }
    if let order = try? OrderRequest.parse(body: bytes) {
        precondition(!order.userID.isEmpty && order.userID.unicodeScalars.count <= 64, "user_id out of bounds")
    }
    let text = String(decoding: bytes, as: UTF8.self)
    _ = QueryString.value(of: "app_version", in: text)
    _ = Route.match(method: "GET", path: text)
    return 0
}
