import Foundation
import JSONCodec

/// Reads `Config/server.json`-shaped files: `{"section": {"key": value, …}, …}`.
public enum ConfigurationFile {
    /// The file's bytes; throws a readable error when it is missing or unreadable.
    @Sendable public static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError("no such readable file")
        }
        return [UInt8](data)
    }

    /// The file's settings as dotted keys and values, in file order. Errors name the file and the key.
    static func values(from bytes: [UInt8], path: String) throws(ConfigurationError) -> [(String, ConfigurationValue)] {
        let document: JSONValue
        do {
            document = try JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(bytes)
        } catch {
            throw ConfigurationError("\(path): not valid JSON: \(error.message)")
        }
        guard case .object(let sections) = document else {
            throw ConfigurationError("\(path): expected a JSON object of sections such as {\"http\": {\"port\": 8080}}")
        }
        var values: [(String, ConfigurationValue)] = []
        for (section, members) in sections {
            guard case .object(let members) = members else {
                throw ConfigurationError("\(path): \(section): expected an object of settings")
            }
            try flatten(members, prefix: section, path: path, into: &values)
        }
        return values
    }

    /// Nested objects become dotted keys: `{"jwt": {"secret": …}}` under `auth` is `auth.jwt.secret`.
    static func flatten(
        _ members: JSONObject, prefix: String, path: String, into values: inout [(String, ConfigurationValue)]
    ) throws(ConfigurationError) {
        for (name, value) in members {
            let key = "\(prefix).\(name)"
            if case .object(let nested) = value {
                try flatten(nested, prefix: key, path: path, into: &values)
                continue
            }
            guard let converted = convert(value) else {
                throw ConfigurationError("\(key) (from \(path)): unsupported value \(value.serializedString())")
            }
            values.append((key, converted))
        }
    }

    static func convert(_ value: JSONValue) -> ConfigurationValue? {
        switch value {
        case .string(let string): return .string(string)
        case .bool(let bool): return .bool(bool)
        case .number(.int(let integer)): return Int(exactly: integer).map(ConfigurationValue.integer)
        case .number(.uint(let integer)): return Int(exactly: integer).map(ConfigurationValue.integer)
        case .number(.double(let number)): return .number(number)
        case .array(let elements):
            var strings: [String] = []
            for element in elements {
                guard case .string(let string) = element else { return nil }
                strings.append(string)
            }
            return .strings(strings)
        case .null, .object: return nil
        }
    }
}
