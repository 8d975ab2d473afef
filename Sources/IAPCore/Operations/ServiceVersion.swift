/// The version iap-fcgi and iapctl report (`iapctl status`, `iap_build_info`).
/// Raised when a release is cut; the minor number follows the issues shipped.
public enum ServiceVersion {
    public static let current = "0.13.0"
}
