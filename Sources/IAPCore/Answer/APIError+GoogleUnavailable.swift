extension APIError {
    /// Google's API could not be read for a push that needs it (a partial refund's quantity, a
    /// PURCHASED push's purchase): nothing is stored, and the 503 makes Pub/Sub push it again later.
    public static let googleUnavailable = APIError(
        httpStatus: 503, code: "google_unavailable", message: "Google Play's API could not be read; retry later")
}
