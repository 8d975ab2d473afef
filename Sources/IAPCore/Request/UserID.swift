/// The rule for a user id (`user_id` in requests, `sandbox_users` in settings):
/// 1 to 64 Unicode scalars, none a control character. It is the game's own
/// account id, kept exactly as sent: non-ASCII and punctuation pass intact.
public enum UserID {
    /// The most Unicode scalars a user id may have (the column is `VARCHAR(64)`).
    public static let maxScalars = 64

    /// What a bad `user_id` is told, after the field name.
    static let rule = "must be a string of 1 to \(maxScalars) characters without control characters"

    /// True when `candidate` is an acceptable user id.
    public static func isValid(_ candidate: String) -> Bool {
        candidate.isPlainText(maxScalars: maxScalars)
    }
}
