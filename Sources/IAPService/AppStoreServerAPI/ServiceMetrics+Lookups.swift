import Metrics

/// Get Transaction Info look-ups not made, beside the other metrics (`ServiceMetrics`).
extension ServiceMetrics {
    /// Why a look-up was not made.
    enum LookupRefusal: String {
        /// The minute's `IAP_APPSTORE_LOOKUPS_PER_MINUTE` are spent (a bare id or a receipt's entries).
        case overBudget = "over_budget"
        /// The requester's user or address has had its share of them.
        case overShare = "over_share"
        /// A bare id from a user with no open order: answered 403 `proof_required`.
        case noOpenOrder = "no_open_order"
    }

    /// `iap_transaction_lookups_refused_total{reason}`: one look-up not made.
    static func transactionLookupRefused(reason: LookupRefusal) {
        refusedLookups[[reason.rawValue]].increment()
    }

    private static let refusedLookups = MetricFamily<[String], Counter>.counters(
        "iap_transaction_lookups_refused_total", labels: ["reason"])
}
