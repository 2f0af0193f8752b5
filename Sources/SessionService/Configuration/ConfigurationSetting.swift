/// One row of the configuration schema: its dotted key, help text, type and range, and where it lives
/// in ``ServerConfiguration``.
public struct ConfigurationSetting: Sendable {
    /// Dotted key as written in the config file: `http.port`.
    public let key: String
    public let help: String
    /// What the value must be, for `--help` and error messages: `integer 0…65535`.
    public let expected: String
    let read: @Sendable (ServerConfiguration) -> ConfigurationValue
    let write: @Sendable (inout ServerConfiguration, ConfigurationValue) throws(ConfigurationError) -> Void
    let parse: @Sendable (String) -> ConfigurationValue?

    /// The environment variable that overrides it: `http.maxBodyBytes` → `REACTOR_HTTP_MAX_BODY_BYTES`.
    public var environmentName: String {
        var name = "REACTOR_"
        let characters = Array(key)
        for (index, character) in characters.enumerated() {
            if character == "." {
                name += "_"
                continue
            }
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                // A word starts at an upper-case letter after a lower-case one (maxBody), or at the
                // last capital of an acronym that a lower-case word follows (TTLSeconds), but not one
                // whose plural's "s" ends the word (clientChosenIDs).
                let after = index + 2 < characters.count ? characters[index + 2] : nil
                let plural = next == "s" && (after == nil || after == "." || after?.isUppercase == true)
                if previous.isLowercase || previous.isNumber
                    || (previous.isUppercase && next?.isLowercase == true && !plural)
                {
                    name += "_"
                }
            }
            name += character.uppercased()
        }
        return name
    }

    /// The value this setting has in `configuration`.
    public func value(in configuration: ServerConfiguration) -> ConfigurationValue { read(configuration) }

    /// Sets the value, checking type and range; errors name the key.
    public func apply(_ value: ConfigurationValue, to configuration: inout ServerConfiguration)
        throws(ConfigurationError)
    {
        try write(&configuration, value)
    }

    /// Sets the value from text (environment variable or flag), checking type and range.
    public func apply(text: String, from source: String, to configuration: inout ServerConfiguration)
        throws(ConfigurationError)
    {
        guard let value = parse(text) else {
            throw ConfigurationError(
                "\(key) (from \(source)): expected \(expected), got \(ConfigurationValue.quoted(text))")
        }
        do {
            try write(&configuration, value)
        } catch {
            // Name where the value came from: "http.port (from --port): …".
            let prefix = "\(key): "
            let detail = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            throw ConfigurationError("\(key) (from \(source)): \(detail)")
        }
    }
}

/// The kinds of setting, for the server's schema and for those a catalog adds (``ConfigurationSection``).
extension ConfigurationSetting {
    /// Where a setting's value lives in the configuration.
    public typealias Path<Value> = WritableKeyPath<ServerConfiguration, Value> & Sendable

    /// An integer within `range`.
    public static func integer(_ key: String, _ path: Path<Int>, _ range: ClosedRange<Int>, _ help: String) -> Self {
        let expected = "an integer from \(range.lowerBound) to \(range.upperBound)"
        return Self(
            key: key, help: help, expected: expected, read: { .integer($0[keyPath: path]) },
            write: { configuration, value throws(ConfigurationError) in
                guard case .integer(let integer) = value else { throw mismatch(key, expected, value) }
                guard range.contains(integer) else { throw mismatch(key, expected, value) }
                configuration[keyPath: path] = integer
            },
            parse: { Int($0.trimmed).map(ConfigurationValue.integer) })
    }

    /// A number of seconds within `range` (an integer or a fraction).
    public static func seconds(
        _ key: String, _ path: Path<Double>, _ range: ClosedRange<Double>, _ help: String
    ) -> Self {
        let expected =
            "a number of seconds from \(ConfigurationValue.number(range.lowerBound)) "
            + "to \(ConfigurationValue.number(range.upperBound))"
        return Self(
            key: key, help: help, expected: expected, read: { .number($0[keyPath: path]) },
            write: { configuration, value throws(ConfigurationError) in
                let seconds: Double
                switch value {
                case .integer(let integer): seconds = Double(integer)
                case .number(let number): seconds = number
                default: throw mismatch(key, expected, value)
                }
                guard range.contains(seconds) else { throw mismatch(key, expected, value) }
                configuration[keyPath: path] = seconds
            },
            parse: { text in Double(text.trimmed).flatMap { $0.isFinite ? .number($0) : nil } })
    }

    /// `true` or `false` (from text also 1/0, yes/no, on/off).
    public static func bool(_ key: String, _ path: Path<Bool>, _ help: String) -> Self {
        Self(
            key: key, help: help, expected: "true or false", read: { .bool($0[keyPath: path]) },
            write: { configuration, value throws(ConfigurationError) in
                guard case .bool(let bool) = value else { throw mismatch(key, "true or false", value) }
                configuration[keyPath: path] = bool
            },
            parse: { text in
                switch text.trimmed.lowercased() {
                case "true", "1", "yes", "on": .bool(true)
                case "false", "0", "no", "off": .bool(false)
                default: nil
                }
            })
    }

    /// A string setting; `check` returns a problem description, or nil when the value is fine.
    public static func string(
        _ key: String, _ path: Path<String>, expected: String = "a string", _ help: String,
        check: @escaping @Sendable (String) -> String? = { _ in nil }
    ) -> Self {
        Self(
            key: key, help: help, expected: expected, read: { .string($0[keyPath: path]) },
            write: { configuration, value throws(ConfigurationError) in
                guard case .string(let string) = value else { throw mismatch(key, expected, value) }
                if let problem = check(string) { throw ConfigurationError("\(key): \(problem)") }
                configuration[keyPath: path] = string
            },
            parse: { .string($0) })
    }

    /// A list of strings; from text it is comma-separated.
    public static func strings(
        _ key: String, _ path: Path<[String]>, _ help: String,
        check: @escaping @Sendable (String) -> String? = { _ in nil }
    ) -> Self {
        Self(
            key: key, help: help, expected: "a list of strings", read: { .strings($0[keyPath: path]) },
            write: { configuration, value throws(ConfigurationError) in
                guard case .strings(let strings) = value else { throw mismatch(key, "a list of strings", value) }
                for string in strings {
                    if let problem = check(string) { throw ConfigurationError("\(key): \(problem)") }
                }
                configuration[keyPath: path] = strings
            },
            parse: { text in
                .strings(text.split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty })
            })
    }

    static func mismatch(_ key: String, _ expected: String, _ value: ConfigurationValue) -> ConfigurationError {
        ConfigurationError("\(key): expected \(expected), got \(value.json)")
    }
}

extension String {
    var trimmed: String {
        var slice = self[...]
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}
