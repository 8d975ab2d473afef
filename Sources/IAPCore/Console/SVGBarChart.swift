/// A bar chart as SVG markup, drawn on the server: one group of bars per day,
/// one bar per series, a legend, the largest value on the axis. Every text in
/// it (labels, series names) is escaped here, so the markup can be placed in a
/// page as it is.
public struct SVGBarChart: Sendable {
    public struct Series: Sendable {
        public let name: String
        /// The value of each day, in the order of `days`.
        public let values: [Double]

        public init(name: String, values: [Double]) {
            self.name = name
            self.values = values
        }
    }

    public let title: String
    public let days: [String]
    public let series: [Series]

    public static let width = 720
    public static let height = 240
    static let margin = (left: 48, top: 28, bottom: 40)
    /// Characters of a series name the legend shows.
    static let legendCharacters = 26
    /// The series colours, in turn.
    static let palette = ["#3b6ea5", "#d08c2c", "#5a9a58", "#b4485a", "#7d5ba6", "#4c9aa0", "#8a7f3a", "#666666"]

    public init(title: String, days: [String], series: [Series]) {
        self.title = title
        self.days = days
        self.series = series
    }

    public var svg: String {
        let width = Self.width, height = Self.height
        let plotWidth = width - Self.margin.left - 8
        let plotHeight = height - Self.margin.top - Self.margin.bottom
        let maximum = series.flatMap(\.values).max() ?? 0
        let scale = maximum > 0 ? Double(plotHeight) / maximum : 0
        var out = "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" class=\"chart\" "
            + "viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\">"
        out += "<title>\(Self.escape(title))</title>"
        out += "<text x=\"4\" y=\"16\" class=\"chart-title\">\(Self.escape(title))</text>"
        let baseline = Self.margin.top + plotHeight
        out += "<line x1=\"\(Self.margin.left)\" y1=\"\(baseline)\" x2=\"\(width - 8)\" y2=\"\(baseline)\" stroke=\"#999\"/>"
        out += "<text x=\"\(Self.margin.left - 4)\" y=\"\(Self.margin.top + 4)\" text-anchor=\"end\">\(Self.number(maximum))</text>"
        out += "<text x=\"\(Self.margin.left - 4)\" y=\"\(baseline)\" text-anchor=\"end\">0</text>"
        if days.isEmpty || series.isEmpty {
            out += "<text x=\"\(width / 2)\" y=\"\(Self.margin.top + plotHeight / 2)\" text-anchor=\"middle\">no data in this range</text>"
            return out + "</svg>"
        }
        let groupWidth = Double(plotWidth) / Double(days.count)
        let barWidth = max(1, groupWidth * 0.8 / Double(series.count))
        for (dayIndex, day) in days.enumerated() {
            let groupX = Double(Self.margin.left) + groupWidth * Double(dayIndex) + groupWidth * 0.1
            for (seriesIndex, one) in series.enumerated() {
                let value = dayIndex < one.values.count ? one.values[dayIndex] : 0
                let barHeight = value * scale
                let x = groupX + barWidth * Double(seriesIndex)
                out += "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(Double(baseline) - barHeight))\" "
                    + "width=\"\(Self.number(barWidth))\" height=\"\(Self.number(barHeight))\" "
                    + "fill=\"\(Self.palette[seriesIndex % Self.palette.count])\">"
                    + "<title>\(Self.escape(day)) \(Self.escape(one.name)): \(Self.number(value))</title></rect>"
            }
            if days.count <= 16 || dayIndex % ((days.count + 15) / 16) == 0 {
                out += "<text x=\"\(Self.number(groupX))\" y=\"\(baseline + 14)\" class=\"chart-day\">"
                    + "\(Self.escape(String(day.suffix(5))))</text>"
            }
        }
        for (seriesIndex, one) in series.enumerated() {
            let x = Self.margin.left + (seriesIndex % 4) * 170
            let y = baseline + 28 + (seriesIndex / 4) * 12
            out += "<rect x=\"\(x)\" y=\"\(y - 8)\" width=\"8\" height=\"8\" fill=\"\(Self.palette[seriesIndex % Self.palette.count])\"/>"
            // 170 pixels a name: a longer one is cut there, and whole in its tooltip.
            let shown = one.name.count > Self.legendCharacters ? one.name.prefix(Self.legendCharacters - 1) + "…" : one.name
            out += "<text x=\"\(x + 12)\" y=\"\(y)\"><title>\(Self.escape(one.name))</title>\(Self.escape(shown))</text>"
        }
        return out + "</svg>"
    }

    /// A value as the chart writes it: at most two decimals, no trailing zeros.
    static func number(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        if hundredths.truncatingRemainder(dividingBy: 100) == 0 { return String(Int64(hundredths / 100)) }
        return String(Double(Int64(hundredths)) / 100)
    }

    /// Text for SVG or HTML: `& < > " '` as character references.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// Rows of a report (day, series name, value) laid out as a chart's days and series.
public enum ChartSeries {
    /// The days from `rows` in order, and one series per name (in order of first appearance) with 0 for
    /// the days it lacks.
    public static func arrange(_ rows: [(day: String, name: String, value: Double)]) -> (days: [String], series: [SVGBarChart.Series]) {
        let days = Array(Set(rows.map(\.day))).sorted()
        var names: [String] = []
        var values: [String: [String: Double]] = [:]
        for row in rows {
            if values[row.name] == nil { names.append(row.name) }
            values[row.name, default: [:]][row.day, default: 0] += row.value
        }
        return (days, names.map { name in SVGBarChart.Series(name: name, values: days.map { values[name]?[$0] ?? 0 }) })
    }
}
