/// The `NAME=value` lines of iap-fcgi's env file read by systemd's `EnvironmentFile=` rules, so that
/// `iapctl` in a shell sees each value exactly as the service does (a shell's `. file` would expand
/// `$`, end a value at a space or `&`, and strip quotes its own way):
/// - a line starting with `#` or `;` is a comment; a line without `=` is ignored;
/// - spaces around the name and before the value are dropped, and so are spaces at the value's end;
/// - the value is taken as written to the end of the line, `#`, `$`, `&`, quotes inside it included;
///   a backslash escapes the next character (a backslash at the line's end continues the value);
/// - a value may be quoted: in `'...'` nothing is special; in `"..."` a backslash escapes only
///   `"`, `\`, `` ` `` and `$`.
public enum EnvironmentFile {
    public struct Variable: Equatable, Sendable {
        public let name: String
        public let value: String
    }

    private enum State {
        case beforeName, name, beforeValue, value, valueEscape, singleQuoted, doubleQuoted, doubleQuotedEscape,
            comment
    }

    public static func parse(_ text: String) -> [Variable] {
        var variables: [Variable] = []
        var state = State.beforeName
        var name: [Character] = []
        var value: [Character] = []
        var nameEnd: Int? = nil  // where the name's trailing spaces start
        var valueEnd: Int? = nil  // where the value's trailing unescaped spaces start

        func finish() {
            let trimmedName = String(name[..<(nameEnd ?? name.count)])
            let trimmedValue = String(value[..<(valueEnd ?? value.count)])
            if isValidName(trimmedName) { variables.append(Variable(name: trimmedName, value: trimmedValue)) }
            name = []
            value = []
            nameEnd = nil
            valueEnd = nil
        }

        for character in text {
            let isNewline = character == "\n" || character == "\r" || character == "\r\n"
            let isSpace = isNewline || character == " " || character == "\t"
            switch state {
            case .beforeName:
                if character == "#" || character == ";" {
                    state = .comment
                } else if !isSpace {
                    state = .name
                    name = [character]
                    nameEnd = nil
                }
            case .name:
                if isNewline {
                    state = .beforeName
                    name = []
                } else if character == "=" {
                    state = .beforeValue
                    valueEnd = nil
                } else {
                    if !isSpace { nameEnd = nil } else if nameEnd == nil { nameEnd = name.count }
                    name.append(character)
                }
            case .beforeValue:
                if isNewline {
                    state = .beforeName
                    finish()
                } else if character == "'" {
                    state = .singleQuoted
                } else if character == "\"" {
                    state = .doubleQuoted
                } else if character == "\\" {
                    state = .valueEscape
                } else if !isSpace {
                    state = .value
                    value.append(character)
                }
            case .value:
                if isNewline {
                    state = .beforeName
                    finish()
                } else if character == "\\" {
                    state = .valueEscape
                    valueEnd = nil
                } else {
                    if !isSpace { valueEnd = nil } else if valueEnd == nil { valueEnd = value.count }
                    value.append(character)
                }
            case .valueEscape:
                state = .value
                if !isNewline { value.append(character) }
            case .singleQuoted:
                if character == "'" { state = .beforeValue } else { value.append(character) }
            case .doubleQuoted:
                if character == "\"" {
                    state = .beforeValue
                } else if character == "\\" {
                    state = .doubleQuotedEscape
                } else {
                    value.append(character)
                }
            case .doubleQuotedEscape:
                state = .doubleQuoted
                if "\"\\`$".contains(character) {
                    value.append(character)
                } else if !isNewline {
                    value.append(contentsOf: ["\\", character])
                }
            case .comment:
                if isNewline { state = .beforeName }
            }
        }
        switch state {
        case .beforeValue, .value, .valueEscape, .singleQuoted, .doubleQuoted, .doubleQuotedEscape: finish()
        case .beforeName, .name, .comment: break
        }
        return variables
    }

    /// A name the environment can hold: letters, digits and `_`, not starting with a digit.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)) }
    }
}
