/// `IAP_CONSUMPTION`: whether refund requests (`CONSUMPTION_REQUEST`) are
/// answered with Send Consumption Information. Default `on`; it needs the App
/// Store Server API (`IAP_APPSTORE_*`), without which nothing is sent.
public enum ConsumptionSetting: String, Sendable, CaseIterable {
    case on
    case off

    /// Reads `IAP_CONSUMPTION` (unset or empty: `on`).
    /// - Throws: a value other than `on` or `off`, naming the variable.
    static func fromEnvironment(_ reader: EnvironmentReader) throws(ConfigurationError) -> ConsumptionSetting {
        guard let text = reader["IAP_CONSUMPTION"] else { return .on }
        guard let setting = ConsumptionSetting(rawValue: text) else {
            throw .invalid(
                "IAP_CONSUMPTION",
                "must be on or off (answer Apple's refund requests with the consumption, or not)", got: text)
        }
        return setting
    }
}
