extension APIError {
    /// `POST /v1/notifications/google` without `IAP_GOOGLE_PUSH_AUDIENCE` and
    /// `IAP_GOOGLE_PUSH_SERVICE_ACCOUNT`: no push can be authenticated.
    public static let googlePushNotConfigured = APIError(
        httpStatus: 503, code: "google_not_configured",
        message: "Google Play notifications are not configured on this service")
    /// A push without a Bearer token Google signed for this subscription's audience and service account.
    public static let unauthorizedPush = APIError(
        httpStatus: 401, code: "unauthorized",
        message: "the push does not carry a token Google signed for this subscription")
}
