import IAPCore

/// An `SVGBarChart`'s drawing as the `chart` template's context: its numbers, and every text (title,
/// day labels, series names, tooltips) left for the template to escape.
enum ConsoleChartContext {
    static func context(_ chart: SVGBarChart) -> [String: Any] {
        [
            "width": SVGBarChart.width, "height": SVGBarChart.height, "title": chart.title,
            "axisX": SVGBarChart.axisX, "axisLabelX": SVGBarChart.axisLabelX, "axisTopY": SVGBarChart.axisTopY,
            "baseline": SVGBarChart.baseline, "baselineEndX": SVGBarChart.baselineEndX,
            "dayLabelY": SVGBarChart.dayLabelY, "maximum": chart.maximumLabel, "hasData": chart.hasData,
            "emptyX": SVGBarChart.emptyMessage.x, "emptyY": SVGBarChart.emptyMessage.y,
            "days": chart.dayGroups.map(day),
            "legend": chart.legend.map { entry -> [String: Any] in
                ["x": entry.x, "y": entry.y, "boxY": entry.boxY, "textX": entry.textX, "fill": entry.fill,
                 "name": entry.name, "shown": entry.shown]
            },
        ]
    }

    private static func day(_ day: SVGBarChart.Day) -> [String: Any] {
        var context: [String: Any] = [
            "bars": day.bars.map { bar -> [String: Any] in
                ["x": bar.x, "y": bar.y, "width": bar.width, "height": bar.height, "fill": bar.fill, "tooltip": bar.tooltip]
            },
        ]
        if let label = day.label { context["label"] = ["x": label.x, "text": label.text] }
        return context
    }
}
