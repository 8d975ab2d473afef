/// Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`):
/// the latest period and renewal info of every chain of the customer who owns that
/// transaction, in every subscription group of the app. Both JWS still have to be
/// verified before anything is taken from them.
public struct SubscriptionStatusesReply: Equatable, Sendable {
    /// One chain as Apple sees it now.
    public struct Chain: Equatable, Sendable {
        /// Apple's number: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
        public let appleStatus: Int
        public let originalTransactionID: String
        /// The latest period, signed.
        public let signedTransactionInfo: String
        /// Its renewal info, signed; nil when Apple sent none.
        public let signedRenewalInfo: String?

        public init(appleStatus: Int, originalTransactionID: String, signedTransactionInfo: String, signedRenewalInfo: String?) {
            self.appleStatus = appleStatus
            self.originalTransactionID = originalTransactionID
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }

        /// The status here of Apple's number; nil for a number Apple may add later.
        public var status: SubscriptionStatus? { SubscriptionStatus(appleStatus: appleStatus) }
    }

    public static func path(transactionID: String) -> String? {
        AppleTransactionID.isValid(transactionID) ? "/inApps/v1/subscriptions/" + transactionID : nil
    }

    /// `Production` or `Sandbox`.
    public let environment: String?
    public let chains: [Chain]

    /// Reads `{"environment", "data": [{"subscriptionGroupIdentifier", "lastTransactions": [{"status",
    /// "originalTransactionId", "signedTransactionInfo", "signedRenewalInfo"}]}]}`; nil when it is not that.
    public init?(body: [UInt8]) {
        guard let json = (try? JSONParser.parse(body))?.objectValue, case .array(let groups)? = json["data"] else {
            return nil
        }
        var chains: [Chain] = []
        for group in groups {
            guard case .array(let items)? = group.objectValue?["lastTransactions"] else { return nil }
            for item in items {
                guard let object = item.objectValue, case .number(let status)? = object["status"],
                      let appleStatus = Int(status), case .string(let original)? = object["originalTransactionId"],
                      case .string(let transaction)? = object["signedTransactionInfo"]
                else { return nil }
                chains.append(
                    Chain(
                        appleStatus: appleStatus, originalTransactionID: original, signedTransactionInfo: transaction,
                        signedRenewalInfo: object["signedRenewalInfo"]?.stringValue))
            }
        }
        environment = json["environment"]?.stringValue
        self.chains = chains
    }
}
