import IAPCore
import MariaDB

/// A request to the console: what `HTTPRequest` carries, and the cookies.
struct ConsoleRequest {
    let http: HTTPRequest
    let cookieHeader: String?

    var clientAddress: String { http.clientAddress ?? "-" }
    var form: FormFields { FormFields(body: http.body) }
    var query: FormFields { FormFields(http.query) }
    func cookie(_ name: String) -> String? { CookieHeader.value(of: name, in: cookieHeader) }
}

/// The console's pages and actions (paths under `/console/`). Every page but
/// the login needs a session; every POST needs the session's CSRF token (the
/// login form, a token of its own in a cookie); every answer carries the
/// headers of `ConsolePage`.
struct ConsoleRouter: Sendable {
    let configuration: ServiceConfiguration
    let console: ConsoleConfiguration
    let appStoreServer: AppStoreServerClient?

    static let sessionCookie = "__Host-iap_console"
    static let loginCookie = "__Host-iap_console_login"

    func handle(_ request: ConsoleRequest, connection: MariaDBConnection) -> Response {
        do {
            return try route(request, connection: connection)
        } catch {
            Log.event("console: \(request.http.method) \(request.http.path) failed: \(error)")
            return ConsolePage.html(500, title: "Error", body: "<p>The database failed; try again.</p>", staff: nil)
        }
    }

    private func route(_ request: ConsoleRequest, connection: MariaDBConnection) throws -> Response {
        let method = request.http.method, path = request.http.path
        switch (method, path) {
        case ("GET", "/console/style.css"):
            return ConsolePage.stylesheet()
        case ("GET", "/console/login"):
            return loginPage(notice: nil)
        case ("POST", "/console/login"):
            return try login(request, connection: connection)
        default:
            break
        }
        guard Self.knownPaths.contains(path) else { return ConsolePage.notFound() }
        let sessions = ConsoleSessions(
            connection: connection,
            lifetime: SessionLifetime(idleSeconds: console.idleTimeoutSeconds, absoluteSeconds: console.absoluteTimeoutSeconds))
        guard let session = try sessions.current(token: request.cookie(Self.sessionCookie)) else {
            return method == "GET" ? ConsolePage.redirect("/console/login") : ConsolePage.forbidden("Your session ended: log in again.", staff: nil)
        }
        if method == "POST" {
            guard let csrf = request.form["csrf"], ConstantTime.equal(csrf, session.csrfToken) else {
                return ConsolePage.forbidden("This form is not from your session (CSRF token refused): reload the page.", staff: session)
            }
        }
        let pages = ConsolePages(connection: connection, session: session, actions: actions(connection))
        switch (method, path) {
        case ("POST", "/console/logout"):
            try connection.transaction {
                try sessions.close(tokenSHA256: session.tokenSHA256)
                try StaffAudit(connection: connection, actor: actor(session.staffName, request))
                    .record(.logout, target: session.staffName, result: "logged out")
            }
            return ConsolePage.redirect("/console/login", cookies: [ConsolePage.expiredCookie(Self.sessionCookie)])
        case ("GET", "/console/"): return pages.search(kind: .userID, query: "", notice: nil)
        case ("GET", "/console/search"): return try pages.searchResults(request.query, posted: false)
        case ("POST", "/console/search"): return try pages.searchResults(request.form, posted: true)
        case ("GET", "/console/player"): return try pages.player(request.query["user"] ?? "")
        case ("GET", "/console/lookup"): return try pages.lookup(request.query["order"] ?? "")
        case ("GET", "/console/reports"): return try pages.reports(request.query)
        case ("GET", "/console/settings"): return try pages.settings()
        case ("GET", "/console/staff"): return try pages.staff()
        case ("POST", "/console/confirm"): return pages.confirm(request.form)
        case ("POST", "/console/act"): return try pages.act(request.form, by: actor(session.staffName, request))
        default: return ConsolePage.notFound()
        }
    }

    static let knownPaths: Set<String> = [
        "/console/", "/console/logout", "/console/search", "/console/player", "/console/lookup", "/console/reports",
        "/console/settings", "/console/staff", "/console/confirm", "/console/act",
    ]

    private func actions(_ connection: MariaDBConnection) -> ConsoleActions {
        ConsoleActions(connection: connection, configuration: configuration, appStoreServer: appStoreServer)
    }

    /// The login form, with a fresh token in a cookie and in the form (double submit: a page of another
    /// site can neither read the cookie nor, SameSite=Strict, send it).
    private func loginPage(notice: String?, status: Int = 200) -> Response {
        let token = StaffPassword.randomToken()
        return ConsolePage.html(
            status, title: "Log in", body: ConsoleTemplates.render("login", ["csrf": token]), staff: nil, notice: notice,
            cookies: [ConsolePage.cookie(Self.loginCookie, token)])
    }

    /// A login. Refused before its password is checked when `LoginThrottle` says so; otherwise scrypt
    /// runs whether the name is an account, a disabled one or none (against a hash no password gives), so
    /// that the time taken does not tell which. Each outcome is written with its audit row in one
    /// transaction.
    private func login(_ request: ConsoleRequest, connection: MariaDBConnection) throws -> Response {
        let form = request.form
        guard let token = request.cookie(Self.loginCookie), let sent = form["csrf"], ConstantTime.equal(token, sent) else {
            return loginPage(notice: "This form is not from this browser's session (CSRF token refused): try again.", status: 403)
        }
        let name = form["name"] ?? "", password = form["password"] ?? ""
        let attempts = LoginAttempts(connection: connection, throttle: .standard)
        switch try attempts.decision(name: name, address: request.clientAddress) {
        case .allowed:
            break
        case .locked:
            return loginPage(
                notice: "Too many failed logins for this name from this address: wait 15 minutes, or ask an admin"
                    + " to unlock it (iapctl staff unlock).", status: 429)
        case .wait(let seconds):
            return loginPage(notice: "Too many failed logins: try again in \(seconds) s.", status: 429)
        }
        let account = try StaffStore(connection: connection).account(named: name)
        let matches = StaffPassword.verify(password, against: account?.passwordHash ?? StaffPassword.noAccountHash)
        let audit = StaffAudit(connection: connection, actor: actor(String(name.prefix(64)), request))
        guard let account, !account.disabled, matches else {
            try connection.transaction {
                try attempts.recordFailure(name: name, address: request.clientAddress)
                try audit.record(
                    .loginFailed, target: String(name.prefix(64)),
                    result: account?.disabled == true && matches ? "refused: account disabled" : "refused: wrong name or password")
            }
            return loginPage(notice: "Wrong name or password.", status: 403)
        }
        let newHash = StaffPassword.isOutdated(account.passwordHash) ? StaffPassword.hash(password) : nil
        let sessionToken = try connection.transaction {
            try attempts.recordSuccess(name: name, address: request.clientAddress)
            if let newHash { try StaffStore(connection: connection).replaceHash(staffID: account.staffID, with: newHash) }
            try audit.record(.login, target: name, result: newHash == nil ? "logged in" : "logged in; password hash made again at today's cost")
            return try ConsoleSessions(
                connection: connection,
                lifetime: SessionLifetime(idleSeconds: console.idleTimeoutSeconds, absoluteSeconds: console.absoluteTimeoutSeconds)
            ).open(staffID: account.staffID, clientAddress: request.http.clientAddress)
        }
        return ConsolePage.redirect(
            "/console/", cookies: [ConsolePage.cookie(Self.sessionCookie, sessionToken), ConsolePage.expiredCookie(Self.loginCookie)])
    }

    private func actor(_ staffName: String, _ request: ConsoleRequest) -> StaffAudit.Actor {
        StaffAudit.Actor(name: staffName, clientAddress: request.http.clientAddress)
    }
}
