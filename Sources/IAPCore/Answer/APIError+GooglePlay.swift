extension APIError {
    /// A Google route without `IAP_GOOGLE_PACKAGES` and `IAP_GOOGLE_SERVICE_ACCOUNT_FILE`.
    /// A 503: the operator can configure it, and then the same request succeeds.
    public static let googleNotConfigured = APIError(
        httpStatus: 503, code: "google_not_configured",
        message: "Google Play is not configured here (IAP_GOOGLE_PACKAGES, IAP_GOOGLE_SERVICE_ACCOUNT_FILE)")
}
