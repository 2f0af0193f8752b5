import JSONCodec

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

    static func quoted(_ string: String) -> String { JSONWriter.quoted(string) }
}

/// Invalid configuration: names the setting (or flag) and what is wrong with it. Exit code 2.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
