/// The members the verify routes (receipts, signed transactions, Google
/// purchases) read alike: whose the purchase is (`order_id`, a UUID taken in
/// lowercase, and `user_id`) and the version of the app that sent it
/// (`app_version`). Each is optional; one that is present must be valid
/// (400 `invalid_field`, naming it).
struct BuyerFields {
    let orderID: String?
    let userID: String?
    let appVersion: String?

    init(_ fields: RequestBody) throws(APIError) {
        orderID = try fields.optionalString(
            "order_id", "must be a UUID (8-4-4-4-12 hex digits)", where: VerifyRequest.isUUID)?.lowercased()
        userID = try fields.optionalString("user_id", UserID.rule, where: UserID.isValid)
        appVersion = try fields.optionalString(
            "app_version",
            "must be a string of 1 to \(VerifyRequest.maxAppVersionLength) printable ASCII characters",
            where: VerifyRequest.isAppVersion)
    }
}
