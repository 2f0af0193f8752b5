/// The headers of a NATS message: ordered `name: value` fields (a name may repeat), plus the status
/// line's code and description when the server put one there (`NATS/1.0 503`, `NATS/1.0 404 Message Not Found`).
///
/// ```swift
/// var headers: NATSHeaders = ["Nats-Msg-Id": "order-17"]
/// headers["Nats-Expected-Last-Subject-Sequence"] = "4"
/// headers["nats-msg-id"]   // "order-17": names compare without regard to ASCII case
/// ```
public struct NATSHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// One field as it appears on the wire.
    public struct Field: Sendable, Equatable {
        /// The field name, as written.
        public var name: String
        /// The value, without surrounding blanks.
        public var value: String
    }

    /// Every field, in order.
    public private(set) var fields: [Field] = []
    /// The status code of the first line, when there is one (`503` for "no responders").
    public var status: Int?
    /// The words after the status code, when there are any.
    public var statusDescription: String?

    /// No fields and no status.
    public init() {}

    /// Fields from a literal, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// Whether there are neither fields nor a status.
    public var isEmpty: Bool { fields.isEmpty && status == nil }

    /// The first value of `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value }
        set {
            guard let newValue else {
                fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
                return
            }
            if let first = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
                fields[first].value = newValue
                var index = fields.count - 1
                while index > first {
                    if fields[index].name.equalsIgnoringASCIICase(name) { fields.remove(at: index) }
                    index -= 1
                }
            } else {
                fields.append(Field(name: name, value: newValue))
            }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Adds a field after the others, keeping earlier ones of the same name.
    public mutating func append(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// The wire form (`NATS/1.0\r\nName: value\r\n\r\n`), or why these fields cannot be sent: a name
    /// must be printable ASCII without `:`, a value must not contain CR or LF.
    public func encoded() throws(NATSError) -> [UInt8] {
        var bytes = Array("NATS/1.0".utf8)
        if let status { bytes += Array(" \(status)".utf8) }
        if let statusDescription { bytes += [.space] + Array(statusDescription.utf8) }
        bytes += [.cr, .lf]
        for field in fields {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != .colon }) else {
                throw NATSError.invalidArgument(
                    "header name \"\(field.name)\" must be printable ASCII without ':' or blanks")
            }
            guard !field.value.utf8.contains(where: { $0 == .cr || $0 == .lf }) else {
                throw NATSError.invalidArgument("the value of header \(field.name) contains a line break")
            }
            bytes += Array(field.name.utf8) + [.colon, .space] + Array(field.value.utf8) + [.cr, .lf]
        }
        bytes += [.cr, .lf]
        return bytes
    }
}

extension NATSHeaders {
    /// Appends one `name: value` line to a header block, or says why it cannot be sent (see ``encoded()``).
    static func append(_ name: String, _ value: String, to bytes: inout [UInt8]) throws(NATSError) {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != .colon }) else {
            throw NATSError.invalidArgument("header name \"\(name)\" must be printable ASCII without ':' or blanks")
        }
        guard !value.utf8.contains(where: { $0 == .cr || $0 == .lf }) else {
            throw NATSError.invalidArgument("the value of header \(name) contains a line break")
        }
        bytes += name.utf8
        bytes += [.colon, .space]
        bytes += value.utf8
        bytes += [.cr, .lf]
    }

    /// Appends one `name: <decimal>` line (a name known to be valid) without making a String of the number.
    static func append(_ name: String, _ value: UInt64, to bytes: inout [UInt8]) {
        bytes += name.utf8
        bytes += [.colon, .space]
        ClientCommand.appendDecimal(Int(clamping: value), to: &bytes)
        bytes += [.cr, .lf]
    }
}

extension String {
    /// Equality where ASCII letters match regardless of case (header names).
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let left = utf8
        let right = other.utf8
        guard left.count == right.count else { return false }
        return zip(left, right).allSatisfy {
            $0 == $1 || ($0 | 0x20 == $1 | 0x20 && ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A)
        }
    }
}
