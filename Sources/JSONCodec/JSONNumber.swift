/// A JSON number, kept exact: integers that fit 64 bits stay integers, everything else is a `Double`.
///
/// Equality is numeric: `.int(1) == .uint(1) == .double(1.0)`, so a value that round-trips through
/// another representation still compares equal (and hashes equal).
public enum JSONNumber: Sendable {
    case int(Int64)
    case uint(UInt64)
    case double(Double)
}

extension JSONNumber {
    /// The number as an `Int64` when it is an integer that fits, else nil.
    public var int64Value: Int64? {
        switch self {
        case .int(let value): value
        case .uint(let value): Int64(exactly: value)
        case .double(let value): Int64(exactly: value)
        }
    }

    /// The number as a `UInt64` when it is a non-negative integer that fits, else nil.
    public var uint64Value: UInt64? {
        switch self {
        case .int(let value): UInt64(exactly: value)
        case .uint(let value): value
        case .double(let value): UInt64(exactly: value)
        }
    }

    /// The number as a `Double` (possibly rounded for integers beyond 2^53).
    public var doubleValue: Double {
        switch self {
        case .int(let value): Double(value)
        case .uint(let value): Double(value)
        case .double(let value): value
        }
    }

    /// One canonical form per numeric value, so equality and hashing agree across representations.
    private enum Canonical: Hashable {
        case int(Int64)
        case uint(UInt64)
        case double(Double)
    }

    private var canonical: Canonical {
        switch self {
        case .int(let value): return .int(value)
        case .uint(let value):
            if let exact = Int64(exactly: value) { return .int(exact) }
            return .uint(value)
        case .double(let value):
            // -0.0 stays a double: it is a distinct JSON text ("-0") that callers may care about.
            if value == 0, value.sign == .minus { return .double(value) }
            if let exact = Int64(exactly: value) { return .int(exact) }
            if let exact = UInt64(exactly: value) { return .uint(exact) }
            return .double(value)
        }
    }
}

extension JSONNumber: Hashable {
    /// Numeric equality: the same number in any representation is equal.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): a == b
        default: lhs.canonical == rhs.canonical
        }
    }

    /// Hashes the canonical form, so numerically equal values hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(canonical)
    }
}

extension JSONNumber: CustomStringConvertible {
    /// The number as JSON text.
    public var description: String {
        var out = JSONWriter(capacity: 24)
        out.number(self)
        return String(decoding: out.buffer, as: UTF8.self)
    }
}
