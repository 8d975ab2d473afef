/// The console's answers: HTML pages in the layout, redirects, and the headers
/// every one of them carries.
enum ConsolePage {
    /// On every console answer: nothing but this origin's stylesheet and forms, never framed, no
    /// caching (every page may show player data), no referrer leaving the console.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
    ]

    static func html(
        _ status: Int, title: String, body: String, staff: ConsoleSessions.Session?, notice: String? = nil,
        cookies: [String] = []
    ) -> Response {
        var context: [String: Any] = ["title": title, "body": body]
        if let notice { context["notice"] = notice }
        if let staff {
            context["staff"] = [
                "name": staff.staffName, "role": staff.role.rawValue, "csrf": staff.csrfToken,
                "isAdmin": staff.role == .admin,
            ] as [String: Any]
        }
        let page = ConsoleTemplates.render("layout", context)
        return Response(
            status: status,
            headers: [("Content-Type", "text/html; charset=utf-8")] + securityHeaders + cookies.map { ("Set-Cookie", $0) },
            body: Array(page.utf8))
    }

    static func redirect(_ location: String, cookies: [String] = []) -> Response {
        Response(
            status: 303, headers: [("Location", location)] + securityHeaders + cookies.map { ("Set-Cookie", $0) }, body: [])
    }

    static func notFound() -> Response {
        html(404, title: "Not found", body: "<p>No such page.</p>", staff: nil)
    }

    static func forbidden(_ reason: String, staff: ConsoleSessions.Session?) -> Response {
        html(403, title: "Refused", body: "", staff: staff, notice: reason)
    }

    static func stylesheet() -> Response {
        Response(
            status: 200, headers: [("Content-Type", "text/css; charset=utf-8")] + securityHeaders,
            body: Array(ConsoleTemplates.stylesheet.utf8))
    }

    /// A cookie for the console only: never sent by another site's page, never read by a script, only over
    /// TLS. The `__Host-` prefix makes browsers refuse it unless it is `Secure`, for `/` and without a
    /// `Domain`, so that no other host of the domain (and no page over plain HTTP) can set or shadow it.
    static func cookie(_ name: String, _ value: String) -> String {
        "\(name)=\(value); Path=/; HttpOnly; Secure; SameSite=Strict"
    }

    static func expiredCookie(_ name: String) -> String {
        "\(name)=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0"
    }
}
