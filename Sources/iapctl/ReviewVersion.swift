import ArgumentParser

/// `iapctl review-version [X]`: shows or sets the app version in App Review.
/// While it is set, sandbox receipts from that app version are honoured (under
/// the `review` policy). After approval, set a version no client has (`0.0.0`)
/// or clear it.
struct ReviewVersion: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review-version", abstract: "Show or set the app version in App Review.")

    @Argument(help: "The version now in App Review, e.g. 1.3.0. Omit it to show the current one.")
    var version: String?

    @Flag(help: "Clear it: no version is in review.")
    var clear = false

    func validate() throws {
        if clear && version != nil { throw ValidationError("give a version or --clear, not both") }
        if let version, version.isEmpty || version.count > 32 || !version.allSatisfy({ $0.isASCII && !$0.isWhitespace }) {
            throw ValidationError("a version is 1 to 32 printable ASCII characters, e.g. 1.3.0")
        }
    }

    func run() throws {
        let connection = try AdminDatabase.connect()
        if let newValue = clear ? "" : version {
            try Setting.write("review_version", newValue, connection)
        }
        print(try Setting.read("review_version", connection))
    }
}
