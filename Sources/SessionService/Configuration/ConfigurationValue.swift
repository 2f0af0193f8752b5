/// A setting's value as read from the config file, the environment or a flag.
public enum ConfigurationValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case integer(Int)
    case number(Double)
    case bool(Bool)
    case strings([String])

    /// How the value is written in JSON (Config/server.json, `--print-config`).
    public var json: String {
        switch self {
        case .string(let string): Self.quoted(string)
        case .integer(let integer): String(integer)
        case .number(let number):
            number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .bool(let bool): bool ? "true" : "false"
        case .strings(let strings): "[" + strings.map(Self.quoted).joined(separator: ", ") + "]"
        }
    }

    public var description: String { json }

    static func quoted(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case let s where s.value < 0x20:
                let hex = String(s.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Invalid configuration: names the setting (or flag) and what is wrong with it. Exit code 2.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
