import Mustache

/// The console's pages as Mustache templates. `{{name}}` is HTML-escaped;
/// `{{{...}}}` (unescaped) is used only for markup the console drew itself
/// (`body`, the SVG charts), never for data. No script, no font, nothing
/// from another origin: the stylesheet is served by the console too.
enum ConsoleTemplates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates {
            try! library.register(text, named: name)  // the templates are constants: a parse error is a bug
        }
        return library
    }()

    static func render(_ name: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: name) ?? ""
    }

    static let templates: [String: String] = [
        "layout": """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>{{title}} · iap-fcgi support</title>
            <link rel="stylesheet" href="/console/style.css"></head>
            <body>
            <header><a class="brand" href="/console/">iap-fcgi support</a>
            {{#staff}}
            <nav><a href="/console/">Search</a> <a href="/console/reports">Reports</a>
            {{#isAdmin}}<a href="/console/settings">Settings</a> <a href="/console/staff">Staff</a>{{/isAdmin}}</nav>
            <form class="logout" method="post" action="/console/logout"><input type="hidden" name="csrf" value="{{csrf}}">
            <span id="who">{{name}} ({{role}})</span> <button type="submit">Log out</button></form>
            {{/staff}}
            </header>
            <main><h1>{{title}}</h1>
            {{#notice}}<p class="notice" id="notice">{{notice}}</p>{{/notice}}
            {{{body}}}
            </main></body></html>
            """,
        "login": """
            <form method="post" action="/console/login" class="login">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <label>Name <input name="name" id="name" autocomplete="username" required></label>
            <label>Password <input name="password" id="password" type="password" autocomplete="current-password" required></label>
            <button type="submit" id="login">Log in</button>
            </form>
            """,
        "search": """
            <form method="post" action="/console/search" class="search"><input type="hidden" name="csrf" value="{{csrf}}">
            <select name="kind" id="kind">{{#kinds}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/kinds}}</select>
            <input name="q" id="q" value="{{query}}" required> <button type="submit" id="search">Search</button>
            </form>
            {{#hasResults}}<h2>Players</h2><ul id="results">{{#results}}<li><a href="/console/player?user={{userQuery}}">{{userID}}</a></li>{{/results}}</ul>{{/hasResults}}
            """,
        "player": """
            <p class="player">User id: <strong id="user-id">{{userID}}</strong></p>
            <h2>Transactions</h2>
            <table id="transactions"><tr><th>Store</th><th>Transaction</th><th>Original</th><th>Product</th><th>Qty</th><th>Env.</th><th>State</th><th>Purchased</th><th>Delivered</th><th>Refunded</th><th>Meaning</th></tr>
            {{#transactions}}<tr><td><span class="store{{#isGoogle}} google{{/isGoogle}}">{{store}}</span>{{#tokenPrefix}}<br><code title="the purchase token's first characters">{{tokenPrefix}}</code>{{/tokenPrefix}}</td><td class="transaction">{{transactionID}}</td><td>{{originalTransactionID}}</td><td class="product">{{productID}}</td><td class="quantity">{{quantity}}</td><td>{{environment}}</td><td class="state">{{state}}</td><td>{{purchaseDate}}</td><td>{{deliveredAt}}</td><td>{{cancellationDate}}</td><td class="explain">{{explanation}}</td></tr>{{/transactions}}
            </table>
            <h2>Subscriptions</h2>
            <table id="subscriptions"><tr><th>Store</th><th>Chain (original)</th><th>Product</th><th>Env.</th><th>Status</th><th>Expires</th><th>Grace period ends</th><th>Auto-renew</th><th>Expiry reason</th><th>Entitled now</th><th>Meaning</th><th></th></tr>
            {{#subscriptions}}<tr><td>{{store}}</td><td class="chain">{{originalTransactionID}}</td><td class="product">{{productID}}</td><td>{{environment}}</td><td class="status">{{status}}</td><td>{{expiresAt}}</td><td>{{gracePeriodExpiresAt}}</td><td>{{autoRenew}}</td><td>{{expirationIntent}}</td><td class="entitled">{{entitled}}</td><td class="explain">{{explanation}}</td>
            <td>{{#canExtend}}<form method="post" action="/console/confirm" class="extend"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="subscription_extend"><input type="hidden" name="user" value="{{userID}}"><input type="hidden" name="target" value="{{originalTransactionID}}">
            <label>Days <input name="value" class="extend-days" type="number" min="1" max="90" required></label> <label>Reason <select name="reason" class="extend-reason">{{#reasons}}<option value="{{code}}">{{label}}</option>{{/reasons}}</select></label> <button type="submit" class="extend-button">Extend…</button></form>{{/canExtend}}</td></tr>{{/subscriptions}}
            </table>
            <h2>Orders</h2>
            <table id="orders"><tr><th>Order</th><th>Product</th><th>Price</th><th>Status</th><th>Origin</th><th>Created</th><th>Meaning</th></tr>
            {{#orders}}<tr><td>{{orderID}}</td><td class="product">{{productID}}</td><td>{{price}} {{currency}}</td><td>{{status}}</td><td>{{origin}}</td><td>{{createdAt}}</td><td class="explain">{{explanation}}</td></tr>{{/orders}}
            </table>
            <h2>Events for the game</h2>
            <table id="events"><tr><th>Event</th><th>Store</th><th>Type</th><th>Transaction</th><th>Webhook</th><th>Attempts</th><th>Last error</th><th>Created</th><th>Meaning</th><th></th></tr>
            {{#events}}<tr><td>{{eventID}}</td><td>{{store}}</td><td>{{type}}</td><td>{{transactionID}}</td><td class="status">{{status}}</td><td>{{attempts}}</td><td>{{lastError}}</td><td>{{createdAt}}</td><td class="explain">{{explanation}}</td>
            <td>{{#canRedeliver}}<form method="post" action="/console/confirm"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="redeliver_event"><input type="hidden" name="user" value="{{userID}}"><input type="hidden" name="target" value="{{eventID}}"><button type="submit" class="redeliver">Redeliver…</button></form>{{/canRedeliver}}</td></tr>{{/events}}
            </table>
            <h2>Refund requests</h2>
            <table id="refund-requests"><tr><th>Request</th><th>Store</th><th>Transaction</th><th>Reason</th><th>Status</th><th>Asked</th><th>Answer by</th><th>Sent</th><th>Error</th><th>Outcome</th><th>Meaning</th><th></th></tr>
            {{#refundRequests}}<tr><td>{{requestID}}</td><td class="store">{{store}}</td><td>{{transactionID}}</td><td>{{reason}}</td><td class="status">{{status}}</td><td>{{requestedAt}}</td><td>{{deadlineAt}}</td><td><code>{{sentBody}}</code></td><td>{{lastError}}</td><td>{{outcome}}</td><td class="explain">{{explanation}}</td>
            <td>{{#canSend}}<form method="post" action="/console/confirm"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="send_refund_answer"><input type="hidden" name="user" value="{{userID}}"><input type="hidden" name="target" value="{{requestID}}"><button type="submit">Send now…</button></form>{{/canSend}}</td></tr>{{/refundRequests}}
            </table>
            <h2>Apple's notifications</h2>
            <table id="notifications"><tr><th>Type</th><th>Subtype</th><th>Transaction</th><th>Env.</th><th>Signed</th><th>Applied</th><th>Effect</th></tr>
            {{#notifications}}<tr><td>{{type}}</td><td class="subtype">{{subtype}}</td><td>{{transactionID}}</td><td>{{environment}}</td><td>{{signedDate}}</td><td>{{applied}}</td><td>{{effect}}</td></tr>{{/notifications}}
            </table>
            <h2>Google's notifications</h2>
            <table id="google-notifications"><tr><th>Message</th><th>Kind</th><th>Google order</th><th>Event time</th><th>Received</th><th>Effect</th></tr>
            {{#googleNotifications}}<tr><td>{{messageID}}</td><td>{{kind}}</td><td>{{orderID}}</td><td>{{eventTime}}</td><td>{{receivedAt}}</td><td>{{effect}}</td></tr>{{/googleNotifications}}
            </table>
            <h2>Receipts, signed transactions and Google purchases sent (audit)</h2>
            <table id="audit"><tr><th>Row</th><th>Kind</th><th>Transaction</th><th>Env.</th><th>Apple status</th><th>Received</th><th>From</th><th>Meaning</th></tr>
            {{#receipts}}<tr><td>{{receiptID}}</td><td>{{kind}}</td><td>{{transactionID}}</td><td>{{environment}}</td><td>{{appleStatus}}</td><td>{{receivedAt}}</td><td>{{clientIP}}</td><td class="explain">{{explanation}}</td></tr>{{/receipts}}
            </table>
            <h2>What staff did</h2>
            <table id="staff-audit"><tr><th>When</th><th>Who</th><th>Action</th><th>Target</th><th>From</th><th>Result</th></tr>
            {{#staffAudit}}<tr><td>{{createdAt}}</td><td>{{staffName}}</td><td class="action">{{action}}</td><td>{{target}}</td><td>{{clientIP}}</td><td class="result">{{result}}</td></tr>{{/staffAudit}}
            </table>
            """,
        "lookup": """
            <p>Apple order id <strong id="apple-order">{{appleOrderID}}</strong>: what Apple's Look Up Order ID says, and what this database holds.</p>
            <table id="lookup"><tr><th>Transaction</th><th>Product</th><th>Purchased</th><th>Environment</th><th>Here</th><th>Player</th></tr>
            {{#transactions}}<tr><td>{{transactionID}}</td><td class="product">{{productID}}</td><td>{{purchaseDate}}</td><td>{{environment}}</td><td class="state">{{stateHere}}</td><td>{{#userID}}<a href="/console/player?user={{userQuery}}">{{userID}}</a>{{/userID}}</td></tr>{{/transactions}}
            </table>
            {{#canDeliver}}
            <form method="post" action="/console/confirm" class="deliver"><input type="hidden" name="csrf" value="{{csrf}}">
            <input type="hidden" name="action" value="deliver_lookup"><input type="hidden" name="target" value="{{appleOrderID}}">
            <label>Deliver what is missing to user id <input name="user" id="deliver-user" value="{{suggestedUser}}" required></label>
            <button type="submit" id="deliver">Deliver…</button></form>
            {{/canDeliver}}
            """,
        "confirm": """
            <p id="question">{{question}}</p>
            <dl>{{#user}}<dt>Player</dt><dd>{{user}}</dd>{{/user}}<dt>Target</dt><dd id="confirm-target">{{target}}</dd>{{#value}}<dt>Value</dt><dd>{{value}}</dd>{{/value}}{{#reasonLabel}}<dt>Reason</dt><dd>{{reasonLabel}}</dd>{{/reasonLabel}}</dl>
            <form method="post" action="/console/act"><input type="hidden" name="csrf" value="{{csrf}}">
            <input type="hidden" name="action" value="{{action}}"><input type="hidden" name="user" value="{{user}}">
            <input type="hidden" name="target" value="{{target}}"><input type="hidden" name="value" value="{{value}}">
            <input type="hidden" name="role" value="{{role}}"><input type="hidden" name="reason" value="{{reason}}">
            {{#asksPassword}}<label>Password of the new account <input name="password" id="confirm-password" type="password" autocomplete="new-password" required></label>{{/asksPassword}}
            <button type="submit" id="confirm">Confirm</button> <a href="{{back}}">Cancel</a></form>
            """,
        "result": """
            <p id="result">{{result}}</p>
            <p><a id="back" href="{{back}}">Back</a></p>
            """,
        "reports": """
            <form method="get" action="/console/reports" class="range">
            <label>From <input name="from" type="date" value="{{from}}"></label> <label>To <input name="to" type="date" value="{{to}}"></label>
            <button type="submit">Show</button></form>
            {{#charts}}<section class="chart-block">{{{svg}}}</section>{{/charts}}
            <h2>Webhook backlog now</h2>
            <table id="backlog"><tr><th>Pending</th><th>Failed</th><th>Oldest pending</th></tr><tr><td>{{backlog.pending}}</td><td>{{backlog.failed}}</td><td>{{backlog.oldest}}</td></tr></table>
            """,
        "settings": """
            <h2>Review version</h2><p>Now: <strong id="review-version">{{reviewVersion}}</strong></p>
            <form method="post" action="/console/confirm"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="review_version"><input type="hidden" name="target" value="review_version">
            <input name="value" id="review-value" value="{{reviewVersion}}"> <button type="submit" id="set-review">Set…</button></form>
            <h2>Sandbox users</h2><p>Now: <span id="sandbox-users">{{sandboxUsers}}</span></p>
            <form method="post" action="/console/confirm"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="sandbox_users"><input type="hidden" name="target" value="sandbox_users">
            <input name="value" id="sandbox-value" value="{{sandboxUsers}}"> <button type="submit" id="set-sandbox">Set…</button></form>
            """,
        "staff": """
            <table id="staff"><tr><th>Name</th><th>Role</th><th>State</th><th></th></tr>
            {{#accounts}}<tr><td>{{name}}</td><td>{{role}}</td><td>{{state}}</td><td>{{#enabled}}<form method="post" action="/console/confirm"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="staff_disable"><input type="hidden" name="target" value="{{name}}"><button type="submit">Disable…</button></form>{{/enabled}}</td></tr>{{/accounts}}
            </table>
            <h2>New account</h2>
            <form method="post" action="/console/confirm"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="action" value="staff_add">
            <label>Name <input name="target" id="new-name" required></label>
            <label>Role <select name="role" id="new-role"><option value="viewer">viewer</option><option value="support">support</option><option value="admin">admin</option></select></label>
            <button type="submit" id="add-staff">Add…</button></form>
            """,
    ]

    static let stylesheet = """
        body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
        header{display:flex;gap:1.5em;align-items:center;background:#24324a;color:#fff;padding:.5em 1em}
        header a{color:#fff;text-decoration:none;margin-right:1em}.brand{font-weight:bold}
        .logout{margin-left:auto}main{padding:1em 1.5em}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}
        table{border-collapse:collapse;background:#fff;font-size:13px}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
        th{background:#eef1f5}.explain{color:#555;max-width:26em}.notice{background:#fff4d6;border:1px solid #e3c66b;padding:.5em}
        .login label,.deliver label{display:block;margin:.5em 0}.chart{background:#fff;border:1px solid #ddd;margin:.5em 0}
        .chart text{font-size:10px;fill:#333}.chart .chart-title{font-size:13px;font-weight:bold}code{font-size:11px}
        .store{display:inline-block;padding:0 .4em;border-radius:3px;background:#e3ebf7;white-space:nowrap}.store.google{background:#dff2e1}
        """
}
