/// A structured field value: rendered as a JSON string, number or boolean.
public enum LogValue: Sendable, Equatable, CustomStringConvertible,
    ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringInterpolation
{
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }

    public var description: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        }
    }
}

/// Ordered key/value fields attached to a log record, written as a dictionary literal:
/// `["fd": 9, "peer": "127.0.0.1:5123"]` (order kept as written).
public struct LogFields: Sendable, ExpressibleByDictionaryLiteral, RandomAccessCollection {
    public typealias Element = (key: String, value: LogValue)
    public private(set) var pairs: [Element]

    public init(dictionaryLiteral elements: (String, LogValue)...) {
        pairs = elements.map { (key: $0.0, value: $0.1) }
    }

    public init(_ pairs: [Element] = []) { self.pairs = pairs }

    public var startIndex: Int { pairs.startIndex }
    public var endIndex: Int { pairs.endIndex }
    public subscript(position: Int) -> Element { pairs[position] }

    public mutating func append(_ key: String, _ value: LogValue) { pairs.append((key, value)) }
    public mutating func append(contentsOf other: LogFields) { pairs.append(contentsOf: other.pairs) }
    public mutating func removeAll(key: String) { pairs.removeAll(where: { $0.key == key }) }
}
