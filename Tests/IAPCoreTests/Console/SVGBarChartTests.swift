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
        let heights = chart.dayGroups.flatMap(\.bars).map(\.height)
        XCTAssertEqual(heights, ["\(SVGBarChart.plotHeight / 2)", "\(SVGBarChart.plotHeight)"], "the largest bar fills the plot")
        XCTAssertEqual(chart.maximumLabel, "2")
        XCTAssertEqual(chart.dayGroups.flatMap(\.bars).map(\.y), ["\(SVGBarChart.baseline - SVGBarChart.plotHeight / 2)", "28"])
    }

    func testLongNamesAreCutInTheLegendOnly() {
        let name = String(repeating: "p", count: 40) + " CNY"
        let chart = SVGBarChart(title: "t", days: ["2026-11-01"], series: [.init(name: name, values: [1])])
        XCTAssertEqual(chart.legend.map(\.shown), [String(repeating: "p", count: 25) + "…"])
        XCTAssertEqual(chart.legend.map(\.name), [name])
        XCTAssertEqual(chart.dayGroups.flatMap(\.bars).map(\.tooltip), ["2026-11-01 \(name): 1"], "the bar's tooltip names it whole")
    }

    func testDaysAreLabelledSomeWhenMany() {
        let days = (1...30).map { "2026-11-\($0 < 10 ? "0" : "")\($0)" }
        let chart = SVGBarChart(title: "t", days: days, series: [.init(name: "a", values: days.map { _ in 1 })])
        XCTAssertEqual(chart.dayGroups.compactMap(\.label?.text), ["11-01", "11-03", "11-05", "11-07", "11-09", "11-11", "11-13",
            "11-15", "11-17", "11-19", "11-21", "11-23", "11-25", "11-27", "11-29"])
    }

    func testEmptyRangeHasNoBarsAndNoLegend() {
        let chart = SVGBarChart(title: "t", days: [], series: [.init(name: "a", values: [])])
        XCTAssertFalse(chart.hasData)
        XCTAssertTrue(chart.dayGroups.isEmpty)
        XCTAssertTrue(chart.legend.isEmpty)
        XCTAssertEqual(chart.maximumLabel, "0")
    }

    func testNumbersHaveAtMostTwoDecimals() {
        XCTAssertEqual(SVGBarChart.number(3), "3")
        XCTAssertEqual(SVGBarChart.number(2.5), "2.5")
        XCTAssertEqual(SVGBarChart.number(1.234), "1.23")
    }
}
