import ArgumentParser
import IAPCore

/// `iapctl products`: the catalog that orders are priced from.
struct Products: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List or add products.", subcommands: [List.self, Add.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the catalog.")

        func run() throws {
            let connection = try AdminDatabase.connect()
            let rows = try connection.execute(
                "SELECT product_id, price, currency, active, type, title FROM products ORDER BY product_id").rows
            for row in rows {
                let active = row[3] == "1" ? "active" : "inactive"
                print([row[0] ?? "", row[1] ?? "", row[2] ?? "", active, row[4] ?? "", row[5] ?? ""]
                    .joined(separator: "\t"))
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a product, or change the one with that id.")

        @Argument(help: "The App Store Connect product id.")
        var productID: String

        @Option(help: "The price, e.g. 6.00.")
        var price: String

        @Option(help: "ISO 4217 currency.")
        var currency = "CNY"

        @Option(help: "A name for operators.")
        var title = ""

        @Flag(help: "Add it retired: no new orders.")
        var inactive = false

        @Option(help: ArgumentHelp(
            "What it is: consumable (the default: Google consumes it), non_consumable or subscription (Google acknowledges it). Left out: a new product is consumable, an existing one keeps its type.",
            valueName: "type"))
        var type: ProductType?

        func validate() throws {
            guard !productID.isEmpty, productID.unicodeScalars.count <= 128 else {
                throw ValidationError("a product id is 1 to 128 characters")
            }
            guard Price(price) != nil else { throw ValidationError("price must look like 6.00") }
            guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                throw ValidationError("currency is three capital letters, e.g. CNY")
            }
        }

        func run() throws {
            let connection = try AdminDatabase.connect()
            try connection.execute(
                """
                INSERT INTO products (product_id, title, price, currency, active, type)
                VALUES (?, ?, ?, ?, ?, COALESCE(?, 'consumable'))
                ON DUPLICATE KEY UPDATE title = VALUES(title), price = VALUES(price), currency = VALUES(currency),
                  active = VALUES(active), type = COALESCE(?, type)
                """,
                [.text(productID), .text(title), .text(Price(price)!.description), .text(currency),
                 .integer(inactive ? 0 : 1), .optional(type?.rawValue), .optional(type?.rawValue)])
            let stored = try connection.execute("SELECT type FROM products WHERE product_id = ?", [.text(productID)])
                .first?[0] ?? nil
            print("\(productID)\t\(Price(price)!.description)\t\(currency)\t\(inactive ? "inactive" : "active")\t\(stored ?? "")")
        }
    }
}

/// `--type consumable|non_consumable|subscription`, as `products.type` spells it.
extension ProductType: ExpressibleByArgument {}
