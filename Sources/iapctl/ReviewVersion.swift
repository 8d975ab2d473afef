import ArgumentParser
import IAPCore
import IAPService

/// `iapctl review-version [X | --clear]`: shows, sets or clears the app version
/// in App Review. While it is set, sandbox receipts from that app version are
/// honoured (under the `review` policy). After approval, clear it: a version
/// "no client has" is one any sandbox tester can send, since `/v1/version`
/// publishes it, so placeholders are refused (`ReviewVersionRule`).
struct ReviewVersion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review-version", abstract: "Show, set or clear the app version in App Review.")

    @Argument(help: "The version now in App Review, e.g. 1.3.0. Omit it to show the current one.")
    var version: String?

    @Flag(help: "Clear it once the version is approved: no version is in review.")
    var clear = false

    func validate() throws {
        if clear && version != nil { throw ValidationError("give a version or --clear, not both") }
        if let version, let problem = Setting.reviewVersionProblem(version) {
            throw ValidationError(problem)
        }
    }

    func run() throws {
        let connection = try AdminDatabase.connect()
        if let newValue = clear ? "" : version {
            try Setting.write("review_version", newValue, connection)
        }
        let stored = try Setting.read("review_version", connection)
        print(stored)
        if !stored.isEmpty && ReviewVersionRule.isPlaceholder(stored) {
            print(
                "note: \(stored) is a placeholder, and iap-fcgi treats it as no version in review; "
                    + "`iapctl review-version --clear` makes that explicit")
        }
    }
}
