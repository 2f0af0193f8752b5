/// Header fields in arrival order; names compare case-insensitively (ASCII).
///
/// ```swift
/// let headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers["content-type"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable, ExpressibleByDictionaryLiteral, RandomAccessCollection, Equatable {
    /// One field.
    public typealias Element = (name: String, value: String)
    /// The fields, in order.
    public private(set) var fields: [Element]

    /// Headers written as a literal: `["Content-Type": "text/plain"]` (order kept).
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// Headers from name/value pairs.
    public init(_ fields: [Element] = []) { self.fields = fields }

    /// Collection conformance: the first field's position.
    public var startIndex: Int { fields.startIndex }
    /// Collection conformance: one past the last field.
    public var endIndex: Int { fields.endIndex }
    /// The field at `position`.
    public subscript(position: Int) -> Element { fields[position] }

    /// The first value of `name`, or nil; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first(where: { Self.same($0.name, name) })?.value }
        set {
            fields.removeAll(where: { Self.same($0.name, name) })
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { Self.same($0.name, name) ? $0.value : nil }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { fields.contains(where: { Self.same($0.name, name) }) }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// Same fields in the same order (names compared exactly).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields, by: { $0.name == $1.name && $0.value == $1.value })
    }

    /// ASCII case-insensitive equality of two field names.
    static func same(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        // Over contiguous bytes (native strings): per-byte UTF8View iteration costs several times more.
        if let result = a.utf8.withContiguousStorageIfAvailable({ x in
            b.utf8.withContiguousStorageIfAvailable { y in
                for i in 0..<x.count where lowercased(x[i]) != lowercased(y[i]) { return false }
                return true
            }
        }), let result {
            return result
        }
        var a = a.utf8.makeIterator()
        var b = b.utf8.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return true
            case (let x?, let y?): if lowercased(x) != lowercased(y) { return false }
            default: return false
            }
        }
    }
}

/// The ASCII lower-case form of `byte`.
@inline(__always)
func lowercased(_ byte: UInt8) -> UInt8 { byte &- 65 < 26 ? byte | 0x20 : byte }

/// Whether a comma-separated header value lists `token` (ASCII case-insensitive), e.g. `Connection: keep-alive, Upgrade`.
func headerValue(_ value: String, contains token: String) -> Bool {
    value.split(separator: ",").contains { HTTPHeaders.same($0.trimmingSpaces, token) }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var s = self[...]
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return String(s)
    }
}
