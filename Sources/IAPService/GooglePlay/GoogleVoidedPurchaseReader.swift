import Dispatch
import IAPCore

/// Why Google could not be read: unreachable, refusing the service account, or
/// answering what cannot be read. Nothing was applied from that read.
struct GoogleUnavailable: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Every voided one-time purchase Google lists from a start time until now,
/// its pages read one after the other (`GooglePlayClient`, on the client's
/// thread). Blocks its caller until the last page or the first failure: the
/// push of a partial refund on its accept thread, and `iapctl google
/// voided-sync`.
struct GoogleVoidedPurchaseReader: Sendable {
    let client: GooglePlayClient

    func all(packageName: String, startTimeMs: Int64) -> Result<[GoogleVoidedPurchase], GoogleUnavailable> {
        var purchases: [GoogleVoidedPurchase] = []
        var pageToken: String?
        var pageTokensSeen: Set<String> = []
        repeat {
            switch page(packageName: packageName, startTimeMs: startTimeMs, pageToken: pageToken) {
            case .failure(let unavailable):
                return .failure(unavailable)
            case .success(let page):
                purchases += page.purchases
                pageToken = page.nextPageToken
            }
            // A page token seen before would read the same pages for ever.
            if let pageToken, !pageTokensSeen.insert(pageToken).inserted {
                return .failure(GoogleUnavailable("Google gave a page token twice"))
            }
        } while pageToken != nil
        return .success(purchases)
    }

    private func page(
        packageName: String, startTimeMs: Int64, pageToken: String?
    ) -> Result<GoogleVoidedPurchasePage, GoogleUnavailable> {
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<GoogleVoidedPurchasePage, GoogleUnavailable>>(
            .failure(GoogleUnavailable("too many calls to Google wait their turn")))
        guard client.listVoidedPurchases(packageName: packageName, startTimeMs: startTimeMs, pageToken: pageToken, completion: { outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }) else { return result.withLock { $0 } }
        answered.wait()
        return result.withLock { $0 }
    }
}
