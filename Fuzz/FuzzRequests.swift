// Linked with the IAPCore module scripts/fuzz compiles with coverage (testable: internal types too).
@testable import IAPCore

/// Request bodies, query strings and paths, as a client may send them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let request = try? VerifyRequest.parse(body: bytes) {
        // What is stored and sent to Apple must decode to the bytes that were hashed.
        let again = try? ReceiptData.normalise(request.receipt.base64)
        precondition(again?.bytes == request.receipt.bytes, "normalised base64 does not round-trip")
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
