import IAPCore
import MariaDB

/// The pages of a logged-in staff member.
struct ConsolePages {
    let connection: MariaDBConnection
    let session: ConsoleSessions.Session
    let actions: ConsoleActions

    private func page(_ title: String, _ template: String, _ context: [String: Any], notice: String? = nil, status: Int = 200) -> Response {
        var context = context
        context["csrf"] = session.csrfToken
        return ConsolePage.html(status, title: title, body: ConsoleTemplates.render(template, context), staff: session, notice: notice)
    }

    func search(kind: ConsoleSearch, query: String, notice: String?, results: [String] = []) -> Response {
        let kinds = ConsoleSearch.allCases.map { ["value": $0.rawValue, "label": $0.label, "selected": $0 == kind] as [String: Any] }
        return page(
            "Search", "search",
            [
                "kinds": kinds, "query": kind.isSecret ? "" : query, "hasResults": !results.isEmpty,
                "results": results.map { ["userID": $0, "userQuery": FormFields.percentEncoded($0)] },
            ], notice: notice)
    }

    /// A search, from the search form (posted) or an address (`GET /console/search?kind=…&q=…`). A purchase
    /// token only from the form: an address would leave it in the browser's history and the server's logs.
    func searchResults(_ fields: FormFields, posted: Bool) throws -> Response {
        let kind = fields["kind"].flatMap(ConsoleSearch.init) ?? .userID
        let text = fields.text("q") ?? ""
        guard posted || !kind.isSecret else {
            return search(kind: kind, query: "", notice: "Search for a purchase token with the form (it is not put in an address).")
        }
        guard kind.accepts(text) else {
            return search(kind: kind, query: text, notice: "That is not a valid \(kind.label.lowercased()).")
        }
        if kind == .appleOrderID { return ConsolePage.redirect("/console/lookup?order=\(FormFields.percentEncoded(text))") }
        let users = try ConsolePlayerQueries(connection: connection).users(kind, text)
        if users.count == 1 { return ConsolePage.redirect("/console/player?user=\(FormFields.percentEncoded(users[0]))") }
        let nothing = kind.isSecret ? "Nothing found for the token \(StoreLabels.tokenPrefix(text))" : "Nothing found."
        return search(kind: kind, query: text, notice: users.isEmpty ? nothing : nil, results: users)
    }

    func player(_ userID: String) throws -> Response {
        guard UserID.isValid(userID) else { return search(kind: .userID, query: "", notice: "That is not a valid user id.") }
        let context = try ConsolePlayerQueries(connection: connection).player(userID, csrf: session.csrfToken, role: session.role)
        return page("Player", "player", context)
    }

    func lookup(_ appleOrderID: String) throws -> Response {
        guard ConsoleSearch.appleOrderID.accepts(appleOrderID) else {
            return search(kind: .appleOrderID, query: appleOrderID, notice: "That is not a valid Apple order id.")
        }
        let transactions: [ServerAPIQuery.Transaction]
        switch actions.lookUpOrder(appleOrderID) {
        case .success(let found): transactions = found
        case .failure(.notFound): return search(kind: .appleOrderID, query: appleOrderID, notice: "Apple does not know this order id.")
        case .failure(let error): return search(kind: .appleOrderID, query: appleOrderID, notice: "Apple's lookup failed (\(error)); try again.")
        }
        let store = TransactionStore(connection: connection)
        var suggested = ""
        let rows = try transactions.map { transaction -> [String: Any] in
            let stored = try store.stored(transaction.transactionID)
            if let owner = stored?.userID, suggested.isEmpty { suggested = owner }
            var row: [String: Any] = [
                "transactionID": transaction.transactionID, "productID": transaction.productID,
                "purchaseDate": AppleDate.iso8601(ms: transaction.purchaseDate), "environment": transaction.environment,
                "stateHere": stored?.state ?? "not here",
            ]
            if let owner = stored?.userID { row["userID"] = owner; row["userQuery"] = FormFields.percentEncoded(owner) }
            return row
        }
        return page(
            "Apple order", "lookup",
            ["appleOrderID": appleOrderID, "transactions": rows, "canDeliver": session.role.may(.deliverLookup),
             "suggestedUser": suggested])
    }

    func reports(_ query: FormFields) throws -> Response {
        let defaults = try connection.execute("SELECT UTC_DATE() - INTERVAL 29 DAY, UTC_DATE()").first
        let from = query.text("from").flatMap(Self.day) ?? defaults?[0] ?? ""
        let to = query.text("to").flatMap(Self.day) ?? defaults?[1] ?? ""
        return page("Reports", "reports", try ConsoleReports(connection: connection).page(from: from, to: to))
    }

    /// `YYYY-MM-DD`, else nil.
    static func day(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (48...57).contains($0.element) })
        else { return nil }
        return text
    }

    func settings() throws -> Response {
        guard session.role == .admin else { return ConsolePage.forbidden("Admins only.", staff: session) }
        return page(
            "Settings", "settings",
            ["reviewVersion": try Setting.read("review_version", connection),
             "sandboxUsers": try Setting.read("sandbox_users", connection)])
    }

    func staff() throws -> Response {
        guard session.role == .admin else { return ConsolePage.forbidden("Admins only.", staff: session) }
        let accounts = try StaffStore(connection: connection).all().map {
            ["name": $0.name, "role": $0.role.rawValue, "state": $0.disabled ? "disabled" : "enabled", "enabled": !$0.disabled,
             "csrf": session.csrfToken] as [String: Any]
        }
        return page("Staff", "staff", ["accounts": accounts])
    }

    /// The second page of every action: what it will do, and a form to confirm it.
    func confirm(_ form: FormFields) -> Response {
        guard let request = actionRequest(form) else { return ConsolePage.forbidden("Unknown action.", staff: session) }
        guard session.role.may(request.action) else {
            return ConsolePage.forbidden("Your role (\(session.role.rawValue)) may not do this.", staff: session)
        }
        var context: [String: Any] = [
            "question": request.action.question, "action": request.action.rawValue, "target": request.target,
            "value": request.value, "role": request.role, "back": back(request),
            // A new account's password is typed here, on the page that submits it: never sent back in a page.
            "asksPassword": request.action == .staffAdd,
        ]
        if let user = request.userID { context["user"] = user }
        if request.action == .extendSubscription {
            context["reason"] = request.reason
            context["reasonLabel"] = Int(request.reason).flatMap(SubscriptionExtensionReason.init).map(Self.label) ?? request.reason
        }
        return page("Confirm", "confirm", context)
    }

    func act(_ form: FormFields, by actor: StaffAudit.Actor) throws -> Response {
        guard let request = actionRequest(form) else { return ConsolePage.forbidden("Unknown action.", staff: session) }
        guard session.role.may(request.action) else {
            return ConsolePage.forbidden("Your role (\(session.role.rawValue)) may not do this.", staff: session)
        }
        let result = try actions.perform(request, by: actor)
        return page("Done", "result", ["result": result, "back": back(request)])
    }

    private func actionRequest(_ form: FormFields) -> ConsoleActions.Request? {
        guard let action = form["action"].flatMap(StaffAction.init), let target = form.text("target") else { return nil }
        return ConsoleActions.Request(
            action: action, userID: form.text("user"), target: target, value: form["value"] ?? "", role: form["role"] ?? "",
            password: form["password"] ?? "", reason: form["reason"] ?? "")
    }

    /// Apple's reason codes as the extension form offers them.
    static func label(_ reason: SubscriptionExtensionReason) -> String {
        switch reason {
        case .undeclared: return "0: undeclared"
        case .customerSatisfaction: return "1: customer satisfaction"
        case .other: return "2: other"
        case .serviceIssueOrOutage: return "3: service issue or outage"
        }
    }

    private func back(_ request: ConsoleActions.Request) -> String {
        if let user = request.userID { return "/console/player?user=\(FormFields.percentEncoded(user))" }
        switch request.action {
        case .staffAdd, .staffDisable: return "/console/staff"
        default: return "/console/settings"
        }
    }
}
