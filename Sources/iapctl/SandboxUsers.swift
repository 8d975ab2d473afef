import ArgumentParser
import IAPService

/// `iapctl sandbox-users`: the users whose sandbox receipts are honoured under
/// the `review` policy (testers of a live app).
struct SandboxUsers: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox-users", abstract: "List, add or remove sandbox users.")

    @Argument(help: "list, add or remove.")
    var action: String = "list"

    @Argument(help: "The user id to add or remove.")
    var userID: String?

    func validate() throws {
        guard ["list", "add", "remove"].contains(action) else { throw ValidationError("action is list, add or remove") }
        if action != "list", let problem = Setting.sandboxUserProblem(userID ?? "") { throw ValidationError(problem) }
    }

    func run() throws {
        let connection = try AdminDatabase.connect()
        var users = try Setting.sandboxUsers(connection)
        if let userID, action == "add", !users.contains(userID) {
            users.append(userID)
        } else if let userID, action == "remove" {
            users.removeAll { $0 == userID }
        }
        if action != "list" {
            try Setting.writeSandboxUsers(users, connection)
        }
        users.forEach { print($0) }
    }
}
