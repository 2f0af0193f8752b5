extension JSONSchema {
    /// The ways `value` breaks this schema, each naming where (a JSON pointer) and what; empty when it
    /// matches. `root` is the document `$ref`s point into (`#/components/schemas/…`).
    ///
    /// Checks `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`,
    /// `minItems`, `maxItems`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`,
    /// `maxLength`, `pattern`, `oneOf`, `anyOf`, `allOf`, `not` and `$ref`; annotations (`title`,
    /// `description`, `format`, `discriminator`, …) are skipped. Any other keyword is reported as a
    /// violation, so a schema this validator cannot check never passes silently.
    public func validate(_ value: JSONValue, root: JSONValue? = nil) -> [String] {
        var violations: [String] = []
        Validator(root: root ?? json).check(value, against: json, at: "", into: &violations, depth: 0)
        return violations
    }
}

/// Walks a value and a schema together, collecting violations.
private struct Validator {
    let root: JSONValue

    static let annotations: Set<String> = [
        "title", "description", "examples", "example", "default", "format", "discriminator", "contentMediaType",
        "contentEncoding", "contentSchema", "deprecated", "readOnly", "writeOnly", "$schema", "$id", "$comment",
        "$defs", "externalDocs", "xml",
    ]

    func check(
        _ value: JSONValue, against schema: JSONValue, at path: String, into violations: inout [String], depth: Int
    ) {
        guard depth < 64 else { return violations.append("\(path): schema nests too deeply (a $ref cycle?)") }
        switch schema {
        case .bool(true): return
        case .bool(false): return violations.append("\(path): no value is allowed here")
        case .object: break
        default: return violations.append("\(path): the schema is neither an object nor a boolean")
        }
        guard let keywords = schema.objectValue else { return }
        for (keyword, argument) in zip(keywords.keys, keywords.values)
        where !Self.annotations.contains(keyword) && !keyword.hasPrefix("x-") {
            checkKeyword(keyword, argument, keywords, value, path, &violations, depth)
        }
    }

    private func checkKeyword(
        _ keyword: String, _ argument: JSONValue, _ keywords: JSONObject, _ value: JSONValue, _ path: String,
        _ violations: inout [String], _ depth: Int
    ) {
        let here = path.isEmpty ? "(the value)" : path
        switch keyword {
        case "type":
            let types = argument.arrayValue?.compactMap(\.stringValue) ?? argument.stringValue.map { [$0] } ?? []
            if !types.contains(where: { Self.has(value, type: $0) }) {
                violations.append(
                    "\(here): expected \(types.joined(separator: " or ")), got \(value.serializedString().prefix(60))")
            }
        case "enum":
            if !(argument.arrayValue ?? []).contains(value) {
                violations.append("\(here): \(value.serializedString().prefix(60)) is not one of \(argument)")
            }
        case "const":
            if value != argument {
                violations.append("\(here): expected \(argument), got \(value.serializedString().prefix(60))")
            }
        case "properties":
            guard let object = value.objectValue, let properties = argument.objectValue else { return }
            for (name, subschema) in zip(properties.keys, properties.values) {
                if let member = object[name] {
                    check(member, against: subschema, at: path + "/" + name, into: &violations, depth: depth + 1)
                }
            }
        case "required":
            guard let object = value.objectValue else { return }
            for name in argument.arrayValue?.compactMap(\.stringValue) ?? [] where object[name] == nil {
                violations.append("\(here): the member \"\(name)\" is missing")
            }
        case "additionalProperties":
            guard let object = value.objectValue else { return }
            let declared = Set(keywords["properties"]?.objectValue?.keys ?? [])
            for (name, member) in zip(object.keys, object.values) where !declared.contains(name) {
                check(member, against: argument, at: path + "/" + name, into: &violations, depth: depth + 1)
            }
        case "items":
            for (index, element) in (value.arrayValue ?? []).enumerated() {
                check(element, against: argument, at: path + "/\(index)", into: &violations, depth: depth + 1)
            }
        case "minItems", "maxItems":
            guard let count = value.arrayValue?.count, let bound = argument.numberValue?.int64Value else { return }
            if keyword == "minItems" ? count < bound : count > bound {
                violations.append("\(here): \(count) elements breaks \(keyword) \(bound)")
            }
        case "minLength", "maxLength":
            guard let length = value.stringValue?.unicodeScalars.count, let bound = argument.numberValue?.int64Value
            else { return }
            if keyword == "minLength" ? length < bound : length > bound {
                violations.append("\(here): length \(length) breaks \(keyword) \(bound)")
            }
        case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
            guard let number = value.numberValue, let bound = argument.numberValue else { return }
            let order = Self.compare(number, bound)
            let fits =
                switch keyword {
                case "minimum": order >= 0
                case "maximum": order <= 0
                case "exclusiveMinimum": order > 0
                default: order < 0
                }
            if !fits { violations.append("\(here): \(value) breaks \(keyword) \(argument)") }
        case "pattern":
            guard let string = value.stringValue, let pattern = argument.stringValue else { return }
            guard let regex = try? Regex(pattern) else {
                return violations.append("\(here): the pattern \(pattern) does not compile")
            }
            if (try? regex.firstMatch(in: string)) == nil {
                violations.append("\(here): \"\(string.prefix(60))\" does not match \(pattern)")
            }
        case "oneOf", "anyOf", "allOf":
            let branches = argument.arrayValue ?? []
            let failures = branches.map { branch -> [String] in
                var found: [String] = []
                check(value, against: branch, at: path, into: &found, depth: depth + 1)
                return found
            }
            let matched = failures.filter(\.isEmpty).count
            switch keyword {
            case "oneOf" where matched != 1:
                violations.append(
                    "\(here): matches \(matched) of the oneOf branches, not exactly one"
                        + (matched == 0 ? " (\(failures.map { $0.first ?? "" }.joined(separator: "; ")))" : ""))
            case "anyOf" where matched == 0:
                violations.append(
                    "\(here): matches none of the anyOf branches "
                        + "(\(failures.map { $0.first ?? "" }.joined(separator: "; ")))"
                )
            case "allOf":
                violations += failures.flatMap { $0 }
            default: break
            }
        case "not":
            var found: [String] = []
            check(value, against: argument, at: path, into: &found, depth: depth + 1)
            if found.isEmpty { violations.append("\(here): matches a schema it must not match") }
        case "$ref":
            guard let reference = argument.stringValue, reference.hasPrefix("#"),
                let pointer = try? JSONPointer(String(reference.dropFirst())), let target = root[pointer]
            else { return violations.append("\(here): cannot resolve \(argument)") }
            check(value, against: target, at: path, into: &violations, depth: depth + 1)
        default:
            violations.append("\(here): the keyword \"\(keyword)\" is not checked by this validator")
        }
    }

    /// Whether `value` is of the JSON Schema type `type` (an integer is any number without a fraction).
    static func has(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string), ("array", .array),
            ("object", .object):
            true
        case ("integer", .number(let number)):
            switch number {
            case .int, .uint: true
            case .double(let double): double.isFinite && double.rounded(.towardZero) == double
            }
        default: false
        }
    }

    /// -1, 0 or 1 as `a` is below, equal to or above `b`, exactly for integers.
    static func compare(_ a: JSONNumber, _ b: JSONNumber) -> Int {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.uint(let x), .uint(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.int(let x), .uint(let y)): return x < 0 ? -1 : compare(.uint(UInt64(x)), .uint(y))
        case (.uint(let x), .int(let y)): return y < 0 ? 1 : compare(.uint(x), .uint(UInt64(y)))
        case (.double(let x), .double(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.double(let x), _): return compare(x, b)
        case (_, .double(let y)): return -compare(y, a)
        }
    }

    /// -1, 0 or 1 as `x` is below, equal to or above the integer `y`, without rounding `y` to a double
    /// (18446744073709551616 is above `UInt64.max`, though both round to the same double).
    static func compare(_ x: Double, _ y: JSONNumber) -> Int {
        let whole = x.rounded(.down)
        let fraction = x > whole ? 1 : 0
        switch y {
        case .int(let y):
            if whole >= 0x1p63 { return 1 }
            if whole < -0x1p63 { return -1 }
            let order = compare(.int(Int64(whole)), .int(y))
            return order != 0 ? order : fraction
        case .uint(let y):
            if whole >= 0x1p64 { return 1 }
            if whole < 0 { return -1 }
            let order = compare(.uint(UInt64(whole)), .uint(y))
            return order != 0 ? order : fraction
        case .double(let y): return x < y ? -1 : x == y ? 0 : 1
        }
    }
}
