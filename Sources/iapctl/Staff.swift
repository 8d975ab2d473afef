import ArgumentParser
import Glibc
import IAPCore
import IAPService

/// `iapctl staff`: the support console's accounts (`StaffStore`, the same code
/// the console's admins use). Passwords come from a prompt without echo, or the
/// first line of standard input with `--password-stdin` (CI, scripts). Every
/// change is written to `staff_audit` (staff name `iapctl`) with it.
struct Staff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add, list, change, disable or unlock support console accounts.",
        subcommands: [Add.self, Passwd.self, Disable.self, Unlock.self, List.self], defaultSubcommand: List.self)

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an account (viewer, support or admin).")

        @Argument(help: "The login name: letters, digits, dot, dash, underscore.")
        var name: String

        @Option(help: "viewer (reads), support (also acts for players) or admin (also settings and staff).")
        var role: String

        @Flag(help: "Read the password from the first line of standard input instead of a prompt.")
        var passwordStdin = false

        func validate() throws {
            guard StaffRole(rawValue: role) != nil else { throw ValidationError("--role is viewer, support or admin") }
            guard StaffName.isValid(name) else { throw ValidationError(StaffStore.Failure.invalidName.description) }
        }

        func run() throws {
            let password = try StaffPasswordInput.read(fromStandardInput: passwordStdin)
            try StaffStore(connection: AdminDatabase.connect()).add(
                name: name, role: StaffRole(rawValue: role)!, password: password, by: .commandLine)
            print("\(name)\t\(role)")
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an account's password (and enable it again); its sessions end.")

        @Argument(help: "The login name.")
        var name: String

        @Flag(help: "Read the password from the first line of standard input instead of a prompt.")
        var passwordStdin = false

        func run() throws {
            let password = try StaffPasswordInput.read(fromStandardInput: passwordStdin)
            try StaffStore(connection: AdminDatabase.connect()).setPassword(name: name, password: password, by: .commandLine)
            print("\(name)\tpassword set")
        }
    }

    struct Disable: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an account; its sessions end at once.")

        @Argument(help: "The login name.")
        var name: String

        func run() throws {
            try StaffStore(connection: AdminDatabase.connect()).disable(name: name, by: .commandLine)
            print("\(name)\tdisabled")
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget an account's failed logins: its locks end and its logins are no longer slowed.")

        @Argument(help: "The login name.")
        var name: String

        func run() throws {
            try StaffStore(connection: AdminDatabase.connect()).unlock(name: name, by: .commandLine)
            print("\(name)\tunlocked")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The accounts: name, role, enabled or disabled.")

        func run() throws {
            for account in try StaffStore(connection: AdminDatabase.connect()).all() {
                print("\(account.name)\t\(account.role.rawValue)\t\(account.disabled ? "disabled" : "enabled")")
            }
        }
    }
}

/// A new password, typed twice at a prompt without echo, or read once from standard input.
enum StaffPasswordInput {
    static func read(fromStandardInput: Bool) throws -> String {
        if fromStandardInput {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw AdminError("--password-stdin: standard input held no password")
            }
            return line
        }
        let first = String(cString: getpass("Password: "))
        let second = String(cString: getpass("Again: "))
        guard first == second else { throw AdminError("the two passwords differ") }
        return first
    }
}
