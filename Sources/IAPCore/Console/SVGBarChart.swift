/// A bar chart's drawing, worked out on the server: one group of bars per day, one bar per series, a
/// legend, the largest value on the axis. This is geometry and text only; the console draws it through
/// its `chart` template, which HTML-escapes every text here (labels, series names) as it does the pages'.
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

    /// One bar: its rectangle (numbers as the chart writes them), colour and tooltip.
    public struct Bar: Sendable, Equatable {
        public let x, y, width, height: String
        public let fill: String
        /// "day series: value", the series' name whole.
        public let tooltip: String
    }

    /// A day under its bars: the month and day of its date, written from `x`.
    public struct DayLabel: Sendable, Equatable {
        public let x: String
        public let text: String
    }

    /// One day's bars, and its label (every day's when there are at most 16, else some).
    public struct Day: Sendable, Equatable {
        public let bars: [Bar]
        public let label: DayLabel?
    }

    /// One series in the legend: a coloured box at (`x`, `y` - 8) and its name written from (`x` + 12,
    /// `y`), cut when long (whole in its tooltip).
    public struct LegendEntry: Sendable, Equatable {
        public let x, y: Int
        public let fill: String
        public let name: String
        public let shown: String

        public var boxY: Int { y - 8 }
        public var textX: Int { x + 12 }
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

    static var plotWidth: Int { width - margin.left - 8 }
    static var plotHeight: Int { height - margin.top - margin.bottom }
    /// The y of the bars' base line.
    public static var baseline: Int { margin.top + plotHeight }
    public static var axisX: Int { margin.left }
    /// Where the axis' numbers end (they are right-aligned there), and where the largest one sits.
    public static var axisLabelX: Int { margin.left - 4 }
    public static var axisTopY: Int { margin.top + 4 }
    public static var baselineEndX: Int { width - 8 }
    public static var dayLabelY: Int { baseline + 14 }
    /// Where "no data in this range" is written.
    public static var emptyMessage: (x: Int, y: Int) { (width / 2, margin.top + plotHeight / 2) }

    /// False when there is no day or no series: the chart then draws its axis and says so.
    public var hasData: Bool { !days.isEmpty && !series.isEmpty }

    public var maximum: Double { series.flatMap(\.values).max() ?? 0 }

    /// The largest value, as the axis writes it.
    public var maximumLabel: String { Self.number(maximum) }

    public var dayGroups: [Day] {
        guard hasData else { return [] }
        let scale = maximum > 0 ? Double(Self.plotHeight) / maximum : 0
        let groupWidth = Double(Self.plotWidth) / Double(days.count)
        let barWidth = max(1, groupWidth * 0.8 / Double(series.count))
        let labelEvery = days.count <= 16 ? 1 : (days.count + 15) / 16
        return days.enumerated().map { dayIndex, day in
            let groupX = Double(Self.margin.left) + groupWidth * Double(dayIndex) + groupWidth * 0.1
            let bars = series.enumerated().map { seriesIndex, one in
                let value = dayIndex < one.values.count ? one.values[dayIndex] : 0
                let barHeight = value * scale
                return Bar(
                    x: Self.number(groupX + barWidth * Double(seriesIndex)),
                    y: Self.number(Double(Self.baseline) - barHeight),
                    width: Self.number(barWidth), height: Self.number(barHeight),
                    fill: Self.palette[seriesIndex % Self.palette.count],
                    tooltip: "\(day) \(one.name): \(Self.number(value))")
            }
            let label = dayIndex % labelEvery == 0 ? DayLabel(x: Self.number(groupX), text: String(day.suffix(5))) : nil
            return Day(bars: bars, label: label)
        }
    }

    public var legend: [LegendEntry] {
        guard hasData else { return [] }
        return series.enumerated().map { seriesIndex, one in
            // 170 pixels a name: a longer one is cut there, and whole in its tooltip.
            let shown = one.name.count > Self.legendCharacters ? one.name.prefix(Self.legendCharacters - 1) + "…" : one.name
            return LegendEntry(
                x: Self.margin.left + (seriesIndex % 4) * 170, y: Self.baseline + 28 + (seriesIndex / 4) * 12,
                fill: Self.palette[seriesIndex % Self.palette.count], name: one.name, shown: shown)
        }
    }

    /// A value as the chart writes it: at most two decimals, no trailing zeros.
    static func number(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        if hundredths.truncatingRemainder(dividingBy: 100) == 0 { return String(Int64(hundredths / 100)) }
        return String(Double(Int64(hundredths)) / 100)
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
