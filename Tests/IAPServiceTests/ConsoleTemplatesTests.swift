@testable import IAPService
import IAPCore
import XCTest

/// The console's templates as built into the binary, and the SVG chart drawn through them.
final class ConsoleTemplatesTests: XCTestCase {
    func testEveryTemplateIsBuiltInAndParses() {
        XCTAssertEqual(
            Set(ConsoleTemplates.templates.keys),
            ["layout", "login", "search", "player", "lookup", "confirm", "result", "reports", "settings", "staff", "chart"])
        for name in ConsoleTemplates.templates.keys {
            XCTAssertFalse(ConsoleTemplates.render(name, [:]).isEmpty, name)
        }
        XCTAssertTrue(ConsoleTemplates.stylesheet.hasPrefix("body{"))
        XCTAssertFalse(ConsoleTemplates.stylesheet.hasSuffix("\n"), "a file's last newline is not served")
    }

    func testPagesEscapeData() {
        let page = ConsoleTemplates.render("result", ["result": "<b>&\"'", "back": "/console/"])
        XCTAssertEqual(page, "<p id=\"result\">&lt;b&gt;&amp;&quot;&#39;</p>\n<p><a id=\"back\" href=\"/console/\">Back</a></p>")
    }

    func testTheChartIsOneSVGWithItsBarsAndLegend() {
        let svg = ConsoleTemplates.render(SVGBarChart(
            title: "t", days: ["2026-11-01", "2026-11-02"], series: [.init(name: "a", values: [1, 2])]))
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" class=\"chart\" viewBox=\"0 0 720 240\""))
        XCTAssertTrue(svg.hasSuffix("</svg>"))
        XCTAssertEqual(svg.components(separatedBy: "<svg").count, 2)
        XCTAssertTrue(svg.contains("<rect x=\"413.2\" y=\"28\" width=\"265.6\" height=\"172\" fill=\"#3b6ea5\"><title>2026-11-02 a: 2</title></rect>"), svg)
        XCTAssertTrue(svg.contains("<text x=\"413.2\" y=\"214\" class=\"chart-day\">11-02</text>"), svg)
        XCTAssertTrue(svg.contains("<rect x=\"48\" y=\"220\" width=\"8\" height=\"8\" fill=\"#3b6ea5\"/>\n<text x=\"60\" y=\"228\"><title>a</title>a</text>"), svg)
        XCTAssertFalse(svg.contains("no data in this range"))
    }

    /// A product id or store name is data: its `<`, `&` and quotes come out as character references, as on the pages.
    func testTheChartEscapesItsTextLikeThePages() {
        let name = "app<store> & \"gems\" 'x'"
        let svg = ConsoleTemplates.render(SVGBarChart(
            title: "<script>alert(1)</script>", days: ["2026-11-01"], series: [.init(name: name, values: [1])]))
        let escaped = "app&lt;store&gt; &amp; &quot;gems&quot; &#39;x&#39;"
        XCTAssertFalse(svg.contains("<script>"))
        XCTAssertFalse(svg.contains(name))
        XCTAssertTrue(svg.contains("<title>&lt;script&gt;alert(1)&lt;/script&gt;</title>"), svg)
        XCTAssertTrue(svg.contains("<title>2026-11-01 \(escaped): 1</title>"), svg)
        XCTAssertTrue(svg.contains("<title>\(escaped)</title>\(escaped)</text>"), svg)
    }

    func testAnEmptyChartSaysSo() {
        let svg = ConsoleTemplates.render(SVGBarChart(title: "t", days: [], series: []))
        XCTAssertTrue(svg.contains("<text x=\"360\" y=\"114\" text-anchor=\"middle\">no data in this range</text>"), svg)
        XCTAssertFalse(svg.contains("<rect"))
    }
}
