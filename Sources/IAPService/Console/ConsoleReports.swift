import IAPCore
import MariaDB

/// The reports page: the DBA views (sql/011, sql/014, sql/018) over a range of days, as SVG charts; sales
/// by store (App Store, Google Play), as `report_daily_revenue` has them.
struct ConsoleReports {
    let connection: MariaDBConnection

    func page(from: String, to: String) throws -> [String: Any] {
        let range: [SQLValue] = [.asciiBytes(from), .asciiBytes(to)]
        let revenue = try connection.execute(
            "SELECT day, store, product_id, currency, deliveries, net FROM report_daily_revenue"
                + " WHERE day BETWEEN ? AND ? ORDER BY day", range
        ).rows.map { row in
            (day: row[0] ?? "", store: StoreLabels.name(row[1] ?? ""), product: row[2] ?? "", currency: row[3] ?? "",
             count: Double(row[4] ?? "0") ?? 0, amount: Double(row[5] ?? "0") ?? 0)
        }
        let sandbox = try rows(
            """
            SELECT DATE(delivered_at), product_id, COUNT(*), 0 FROM transactions
            WHERE environment = 'Sandbox' AND delivered_at IS NOT NULL AND DATE(delivered_at) BETWEEN ? AND ?
            GROUP BY DATE(delivered_at), product_id ORDER BY 1
            """, range)
        let refunds = try rows(
            "SELECT day, environment, refunds, refunded FROM report_daily_refunds WHERE day BETWEEN ? AND ? ORDER BY day",
            range)
        let requests = try connection.execute(
            """
            SELECT day, SUM(sent), SUM(no_consent), SUM(expired), SUM(failed), SUM(refunded), SUM(declined)
            FROM report_refund_requests_daily WHERE day BETWEEN ? AND ? GROUP BY day ORDER BY day
            """, range
        ).rows.flatMap { row -> [(day: String, name: String, value: Double)] in
            ["sent", "no consent", "expired", "failed", "refunded", "declined"].enumerated().map { index, name in
                (row[0] ?? "", name, Double(row[index + 1] ?? "0") ?? 0)
            }
        }
        let backlog = try connection.execute(
            "SELECT SUM(status = 'pending'), SUM(status = 'failed'), MIN(CASE WHEN status = 'pending' THEN created_at END)"
                + " FROM events"
        ).first
        let charts = [
            chart(
                "Production net revenue per day, by store and currency",
                revenue.map { ($0.day, "\($0.store) \($0.currency)", $0.amount) }),
            chart(
                "Production deliveries per day, by store, product and currency",
                revenue.map { ($0.day, "\($0.store) \($0.product) \($0.currency)", $0.count) }),
            chart(
                "Production net revenue per day, by store, product and currency",
                revenue.map { ($0.day, "\($0.store) \($0.product) \($0.currency)", $0.amount) }),
            chart("Sandbox deliveries per day, by product", sandbox.map { ($0.day, $0.name, $0.count) }),
            chart("Refunds per day, by environment", refunds.map { ($0.day, $0.name, $0.count) }),
            chart("Refund requests per day: how they were answered, what Apple decided", requests),
        ]
        return [
            "from": from, "to": to, "charts": charts.map { ["svg": $0] },
            "backlog": ["pending": backlog?[0] ?? "0", "failed": backlog?[1] ?? "0", "oldest": backlog?[2] ?? "-"],
        ]
    }

    private func rows(_ sql: String, _ parameters: [SQLValue]) throws -> [(day: String, name: String, count: Double, amount: Double)] {
        try connection.execute(sql, parameters).rows.map {
            ($0[0] ?? "", $0[1] ?? "", Double($0[2] ?? "0") ?? 0, Double($0[3] ?? "0") ?? 0)
        }
    }

    private func chart(_ title: String, _ rows: [(day: String, name: String, value: Double)]) -> String {
        let arranged = ChartSeries.arrange(rows)
        return ConsoleTemplates.render(SVGBarChart(title: title, days: arranged.days, series: arranged.series))
    }
}
