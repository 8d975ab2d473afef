import Dispatch
import IAPCore

extension GooglePlayQuery {
    /// What Google says of a purchase token (productsv2).
    public enum PurchaseAnswer: Sendable {
        /// The purchase, and Google's answer as received (it holds no token).
        case purchase(GooglePurchase, body: [UInt8])
        /// 404 or 410: Google does not know the token in that package.
        case unknownToken
        /// Google unreachable, refusing the service account, or answering what cannot be read.
        case unavailable(String)
    }

    /// Reads the purchase `purchaseToken` names in `packageName`, blocking until Google answers (inside
    /// `whileRunning`).
    public func readPurchase(packageName: String, purchaseToken: String) -> PurchaseAnswer {
        let answered = DispatchSemaphore(value: 0)
        let answer = Locked(PurchaseAnswer.unavailable("too many calls to Google wait their turn"))
        guard client.readPurchase(packageName: packageName, purchaseToken: purchaseToken, completion: { read in
            answer.withLock {
                switch read {
                case .purchase(let purchase, let body): $0 = .purchase(purchase, body: body)
                case .unknownToken: $0 = .unknownToken
                case .unavailable(let reason): $0 = .unavailable(reason)
                }
            }
            answered.signal()
        }) else { return answer.withLock { $0 } }
        answered.wait()
        return answer.withLock { $0 }
    }
}
