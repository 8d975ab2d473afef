import XCTest

@testable import IAPCore

final class EnvironmentFileTests: XCTestCase {
    private func values(_ text: String) -> [String: String] {
        Dictionary(EnvironmentFile.parse(text).map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    }

    func testAPasswordWithShellCharactersIsTakenAsWritten() {
        let parsed = values("IAP_DB_PASSWORD=p$HOME&x'y\"z w\n")
        XCTAssertEqual(parsed["IAP_DB_PASSWORD"], "p$HOME&x'y\"z w")
    }

    func testCommentsBlankLinesAndSpacesAroundAreDropped() {
        let parsed = values("# a comment\n; another\n\n  IAP_DB_USER = iap  \r\nIAP_DB_NAME=iap\nnot a variable\n")
        XCTAssertEqual(parsed, ["IAP_DB_USER": "iap", "IAP_DB_NAME": "iap"])
    }

    func testAnExplanationAfterTheValueIsPartOfTheValue() {
        // Why the env file keeps its explanations on lines of their own.
        XCTAssertEqual(values("IAP_DB_TLS=off   (off, verify)")["IAP_DB_TLS"], "off   (off, verify)")
    }

    func testQuotedValuesAndEscapes() {
        let parsed = values(
            """
            A='it''s $x'
            B="say \\"hi\\" \\$x \\n"
            C=one\\ two\\\\
            D=
            E=continued\\
            line
            """)
        XCTAssertEqual(parsed["A"], "its $x")
        XCTAssertEqual(parsed["B"], "say \"hi\" $x \\n")
        XCTAssertEqual(parsed["C"], "one two\\")
        XCTAssertEqual(parsed["D"], "")
        XCTAssertEqual(parsed["E"], "continuedline")
    }

    func testInvalidNamesAreIgnored() {
        XCTAssertEqual(values("1X=a\nX-Y=b\nOK_1=c"), ["OK_1": "c"])
    }

    func testTheLastLineNeedsNoNewline() {
        XCTAssertEqual(values("IAP_BUNDLE_IDS=com.example.game"), ["IAP_BUNDLE_IDS": "com.example.game"])
    }
}
