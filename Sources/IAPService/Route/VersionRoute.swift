import IAPCore

/// GET /v1/version?app_version=X: the review switch, from memory (no query).
struct VersionRoute: Sendable {
    let settings: SettingsCache

    func handle(_ request: HTTPRequest) -> Response {
        let reviewVersion = settings.current.reviewVersion
        let appVersion = QueryString.value(of: "app_version", in: request.query)
        let inReview = !reviewVersion.isEmpty && appVersion == reviewVersion
        return .json(200, .object([
            "review_version": .string(reviewVersion),
            "in_review": .bool(inReview),
            "verify_environment": .string(inReview ? AppleEnvironment.sandbox.rawValue : AppleEnvironment.production.rawValue),
        ]))
    }
}
