import IAPCore
import Mustache

/// The console's pages as Mustache templates, the files of `Templates/` (`chart` draws a report's SVG bar
/// chart). SwiftPM embeds them in the binary at build time (`PackageResources`), so the service reads no
/// file at run time. `{{name}}` is HTML-escaped; `{{{...}}}` (unescaped) is used only for markup the console
/// drew itself from these templates (`body`, the charts), never for data. No script, no font, nothing from
/// another origin: the stylesheet is served by the console too.
enum ConsoleTemplates {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, bytes) in templates {
            try! library.register(text(bytes), named: name)  // the templates are built in: a parse error is a bug
        }
        return library
    }()

    static func render(_ name: String, _ context: [String: Any]) -> String {
        library.render(context, withTemplate: name) ?? ""
    }

    /// `chart` as SVG markup; the page places it unescaped, its text escaped here.
    static func render(_ chart: SVGBarChart) -> String {
        render("chart", ConsoleChartContext.context(chart))
    }

    static let templates: [String: [UInt8]] = [
        "layout": PackageResources.layout_mustache,
        "login": PackageResources.login_mustache,
        "search": PackageResources.search_mustache,
        "player": PackageResources.player_mustache,
        "lookup": PackageResources.lookup_mustache,
        "confirm": PackageResources.confirm_mustache,
        "result": PackageResources.result_mustache,
        "reports": PackageResources.reports_mustache,
        "settings": PackageResources.settings_mustache,
        "staff": PackageResources.staff_mustache,
        "chart": PackageResources.chart_mustache,
    ]

    static let stylesheet = text(PackageResources.style_css)

    /// A file's text without the newline that ends its last line, which is no part of what it renders.
    static func text(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
