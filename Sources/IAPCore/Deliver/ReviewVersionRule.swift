/// What may stand as the app version in App Review (`settings.review_version`).
///
/// `/v1/version` publishes the value and `app_version` is whatever a client
/// sends, so a version "no client has" is one anyone can send: a sandbox
/// tester would get purchases for free for as long as it stays. Leaving review
/// is therefore an empty value (`iapctl review-version --clear`), and a value
/// that looks like a stand-in for "none" is refused by iapctl and honours
/// nothing when found in the table (set by SQL, or by the old procedure).
public enum ReviewVersionRule {
    /// A placeholder: a value with no digit (`x`, `none`, `-`, `n/a`), or one
    /// whose digits are all 0 (`0`, `0.0.0`) or all 9 (`9.9.9`, `999`,
    /// `99.99.99`). Real versions mix digits (`1.3.0`, `2`, `10.0`, `1.0.9`).
    public static func isPlaceholder(_ version: String) -> Bool {
        let digits = version.filter(\.isASCIIDigit)
        guard let first = digits.first else { return true }
        return (first == "0" || first == "9") && digits.allSatisfy { $0 == first }
    }

    /// The version that is in review for a stored value: none (empty) when the
    /// value is empty or a placeholder.
    public static func effective(_ stored: String) -> String {
        isPlaceholder(stored) ? "" : stored
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool {
        ("0"..."9").contains(self)
    }
}
