/// A coding path as a parent-linked chain, so descending one level costs one small allocation
/// and the full `[CodingKey]` array is built only when someone asks (usually for an error).
final class CodingPathNode {
    let parent: CodingPathNode?
    let key: any CodingKey

    init(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    static func keys(_ node: CodingPathNode?) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = node
        while let node = current {
            keys.append(node.key)
            current = node.parent
        }
        return keys.reversed()
    }
}

/// Where a value sits, without allocating: the node is built only when a decoder or an error needs it.
struct CodingPathRef {
    let parent: CodingPathNode?
    let key: (any CodingKey)?

    init(_ parent: CodingPathNode?, _ key: (any CodingKey)? = nil) {
        self.parent = parent
        self.key = key
    }

    var node: CodingPathNode? {
        guard let key else { return parent }
        return CodingPathNode(parent: parent, key: key)
    }
}

/// An array position in a coding path; rendered as `[2]` in messages.
struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }

    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

/// Any member name: used for `JSONValue`'s own Codable and for `superDecoder`/`superEncoder`.
struct AnyKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }

    static let `super` = AnyKey("super")
}

enum CodingPathFormat {
    /// `items[2].text` from [items, 2, text]; nil for the empty (top-level) path.
    static func render(_ path: [any CodingKey]) -> String? {
        guard !path.isEmpty else { return nil }
        var text = ""
        for key in path {
            if key is IndexKey {
                text += "[\(key.stringValue)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        return text
    }

    /// What a value is, for "found …" in messages: strings quoted (and cut short), containers by kind.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let bool): return bool ? "true" : "false"
        case .number(let number): return number.description
        case .string(let string):
            if string.count > 40 {
                return JSONValue.string(String(string.prefix(40))).serializedString().dropLast() + "…\""
            }
            return JSONValue.string(string).serializedString()
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
