import XCTest

@testable import IAPCore

final class SVGBarChartTests: XCTestCase {
    func testSeriesAreArrangedByDayWithZerosForMissingDays() {
        let arranged = ChartSeries.arrange([
            ("2026-11-02", "gems CNY", 3), ("2026-11-01", "gems CNY", 1), ("2026-11-02", "coins USD", 2),
            ("2026-11-02", "gems CNY", 1),
        ])
        XCTAssertEqual(arranged.days, ["2026-11-01", "2026-11-02"])
        XCTAssertEqual(arranged.series.map(\.name), ["gems CNY", "coins USD"])
        XCTAssertEqual(arranged.series.map(\.values), [[1, 4], [0, 2]])
    }

    func testBarsScaleToTheLargestValue() {
        let chart = SVGBarChart(
            title: "t", days: ["2026-11-01", "2026-11-02"], series: [.init(name: "a", values: [1, 2])])
        let svg = chart.svg
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        XCTAssertTrue(svg.hasSuffix("</svg>"))
        let plotHeight = SVGBarChart.height - SVGBarChart.margin.top - SVGBarChart.margin.bottom
        XCTAssertTrue(svg.contains("height=\"\(plotHeight)\""), "the largest bar fills the plot")
        XCTAssertTrue(svg.contains("height=\"\(plotHeight / 2)\""), "half the value, half the height")
    }

    func testTextIsEscaped() {
        let svg = SVGBarChart(
            title: "<script>alert(1)</script>", days: ["2026-11-01"],
            series: [.init(name: "x\"><script>'", values: [1])]).svg
        XCTAssertFalse(svg.contains("<script>"))
        XCTAssertTrue(svg.contains("x&quot;&gt;&lt;script&gt;&#39;"))
    }

    func testLongNamesAreCutInTheLegendOnly() {
        let name = String(repeating: "p", count: 40) + " CNY"
        let svg = SVGBarChart(title: "t", days: ["2026-11-01"], series: [.init(name: name, values: [1])]).svg
        XCTAssertTrue(svg.contains("<title>\(name)</title>\(String(repeating: "p", count: 25))…</text>"))
        XCTAssertTrue(svg.contains("2026-11-01 \(name): 1</title>"), "the bar's tooltip names it whole")
    }

    func testEmptyRangeSaysSo() {
        XCTAssertTrue(SVGBarChart(title: "t", days: [], series: []).svg.contains("no data in this range"))
    }

    func testNumbersHaveAtMostTwoDecimals() {
        XCTAssertEqual(SVGBarChart.number(3), "3")
        XCTAssertEqual(SVGBarChart.number(2.5), "2.5")
        XCTAssertEqual(SVGBarChart.number(1.234), "1.23")
    }
}
