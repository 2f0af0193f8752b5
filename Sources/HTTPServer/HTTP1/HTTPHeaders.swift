/// Header fields in arrival order; names compare case-insensitively (ASCII).
///
/// Parsed headers keep the bytes of the request's field lines and make a `String` only for a field
/// that is read: a request's headers are mostly looked up by name, if at all.
///
/// ```swift
/// let headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers["content-type"]  // "application/json"
/// ```
public struct HTTPHeaders: Sendable, ExpressibleByDictionaryLiteral, RandomAccessCollection, Equatable {
    /// One field.
    public typealias Element = (name: String, value: String)

    /// Where one parsed field's name and value lie in `raw`.
    struct Span: Sendable {
        var name: Range<Int>
        var value: Range<Int>
    }

    /// Bytes one span takes in a parsed `raw`'s table: four `UInt32` offsets (name, value; start, end).
    static let spanBytes = 16

    /// Fields built from strings (empty while the headers are as parsed).
    private var built: [Element]
    /// The parsed field lines followed by their span table (see ``init(raw:fieldCount:tableStart:)``): one
    /// allocation for both, where a separate array of spans cost an allocation, a free and ~300 instructions
    /// per request. For built headers made with `init(constant:)`, their wire form (empty otherwise; a
    /// change turns parsed headers into built ones and drops a wire form).
    private var raw: [UInt8] = []
    /// How many parsed fields `raw`'s table holds (0: the headers are built).
    private var parsedCount: Int32 = 0
    /// Where the span table starts in `raw` (the field lines' byte count).
    private var tableStart: Int32 = 0
    /// Where the first `Content-Type` value lies in `raw`'s lines, as the parser noted it; `contentTypeStart`
    /// is -1 when there is none. Read only while the headers are as parsed (`parsedCount` > 0).
    private var contentTypeStart: Int32 = -1
    private var contentTypeEnd: Int32 = 0

    /// Headers written as a literal: `["Content-Type": "text/plain"]` (order kept).
    public init(dictionaryLiteral elements: (String, String)...) {
        built = elements.map { (name: $0.0, value: $0.1) }
    }

    /// Headers from name/value pairs.
    public init(_ fields: [Element] = []) { built = fields }

    /// Headers sent unchanged on many responses: their wire form is built and sanitized once, here.
    public init(constant fields: [Element]) {
        built = fields
        // Fields the encoder drops or must see (framing, `Date`) keep the general path.
        let special: Set<String> = ["content-length", "transfer-encoding", "connection", "date"]
        guard !fields.contains(where: { special.contains($0.name.lowercased()) }) else { return }
        var wire: [UInt8] = []
        for (name, value) in fields { ResponseEncoder.appendField(name, value, to: &wire) }
        raw = wire
    }

    /// The fields as `Name: value\r\n` lines when built with `init(constant:)` (none of them
    /// `Content-Length`, `Transfer-Encoding`, `Connection` or `Date`), else nil.
    var wireForm: [UInt8]? { parsedCount == 0 && !raw.isEmpty ? raw : nil }

    /// The array parsed headers keep (field lines, span table, then the request's target): the request shares it.
    var storage: [UInt8] { raw }

    /// Whether these are constant headers with a wire form: then they hold no `Connection` field.
    var hasWireForm: Bool { parsedCount == 0 && !raw.isEmpty }

    /// Parsed headers: `raw` holds the field lines (`tableStart` bytes), then `fieldCount` spans, each as
    /// four `UInt32` offsets into the lines (see ``writeSpan(_:at:)``), then whatever the parser keeps beside
    /// them (the request's target). `fieldCount` is at least 1.
    init(raw: [UInt8], fieldCount: Int, tableStart: Int, contentType: Range<Int>? = nil) {
        built = []
        self.raw = raw
        parsedCount = Int32(truncatingIfNeeded: fieldCount)
        self.tableStart = Int32(truncatingIfNeeded: tableStart)
        if let contentType {
            contentTypeStart = Int32(truncatingIfNeeded: contentType.lowerBound)
            contentTypeEnd = Int32(truncatingIfNeeded: contentType.upperBound)
        }
    }

    /// Whether the first `Content-Type` value satisfies `predicate` (false without one): for parsed headers
    /// the field the parser noted, with no search (the search cost ~300 instructions on every POST).
    public func contentTypeSatisfies(_ predicate: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        guard parsedCount > 0 else { return firstValue(named: "Content-Type", satisfies: predicate) }
        guard contentTypeStart >= 0 else { return false }
        let range = Int(contentTypeStart)..<Int(contentTypeEnd)
        return raw.withUnsafeBufferPointer { predicate(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Writes `span`'s entry of a parsed `raw`'s table at `entry` (``spanBytes`` bytes).
    @inline(__always)
    static func writeSpan(_ span: Span, at entry: UnsafeMutableRawPointer) {
        entry.storeBytes(of: UInt32(truncatingIfNeeded: span.name.lowerBound), toByteOffset: 0, as: UInt32.self)
        entry.storeBytes(of: UInt32(truncatingIfNeeded: span.name.upperBound), toByteOffset: 4, as: UInt32.self)
        entry.storeBytes(of: UInt32(truncatingIfNeeded: span.value.lowerBound), toByteOffset: 8, as: UInt32.self)
        entry.storeBytes(of: UInt32(truncatingIfNeeded: span.value.upperBound), toByteOffset: 12, as: UInt32.self)
    }

    /// The `position`th parsed field's span, read from `raw`'s table.
    @inline(__always)
    private func span(_ position: Int) -> Span {
        raw.withUnsafeBytes { Self.span(position, in: $0, tableStart: Int(tableStart)) }
    }

    /// The `position`th span of the table starting at `tableStart` in `bytes`.
    @inline(__always)
    private static func span(_ position: Int, in bytes: UnsafeRawBufferPointer, tableStart: Int) -> Span {
        let offset = tableStart &+ position &* spanBytes
        let entry = bytes.baseAddress! + offset
        let nameStart = Int(entry.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let nameEnd = Int(entry.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        let valueStart = Int(entry.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        let valueEnd = Int(entry.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        return Span(name: nameStart..<nameEnd, value: valueStart..<valueEnd)
    }

    /// The first parsed field named `name`, or nil.
    private func firstSpan(named name: String) -> Span? {
        let count = Int(parsedCount)
        let tableStart = Int(tableStart)
        return raw.withUnsafeBytes { bytes -> Span? in
            for position in 0..<count {
                let span = Self.span(position, in: bytes, tableStart: tableStart)
                if matches(span, name, in: bytes) { return span }
            }
            return nil
        }
    }

    /// The parsed fields' spans, in order.
    private var spans: [Span] { (0..<Int(parsedCount)).map(span) }

    /// The fields, in order (makes a `String` pair for every parsed field).
    public var fields: [Element] { parsedCount == 0 ? built : spans.map(element) }

    /// Collection conformance: the first field's position.
    public var startIndex: Int { 0 }
    /// Collection conformance: one past the last field.
    public var endIndex: Int { parsedCount == 0 ? built.count : Int(parsedCount) }
    /// The field at `position`.
    public subscript(position: Int) -> Element {
        parsedCount == 0 ? built[position] : element(span(checkedPosition(position)))
    }

    /// `position`, once checked to name a parsed field (as an array's subscript would).
    private func checkedPosition(_ position: Int) -> Int {
        precondition(position >= 0 && position < Int(parsedCount), "header index out of range")
        return position
    }

    /// The first value of `name`, or nil; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get {
            if parsedCount == 0 { return built.first(where: { Self.same($0.name, name) })?.value }
            return firstSpan(named: name).map { string($0.value) }
        }
        set {
            makeBuilt()
            built.removeAll(where: { Self.same($0.name, name) })
            if let newValue { built.append((name, newValue)) }
        }
    }

    /// Whether the first value of `name` exists and `predicate` holds for its bytes (no `String`
    /// is made of a parsed value). Not generic: a generic one, called from another module, ran
    /// unspecialized and cost about 450 instructions per call.
    public func firstValue(_ name: String, satisfies predicate: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        if parsedCount == 0 {
            guard var value = self[name] else { return false }
            return value.withUTF8(predicate)
        }
        guard let span = firstSpan(named: name) else { return false }
        return raw.withUnsafeBufferPointer { predicate(UnsafeBufferPointer(rebasing: $0[span.value])) }
    }

    /// ``firstValue(_:satisfies:)`` for a name known when compiling (`"Content-Type"`): compared as plain
    /// bytes, where a `String` name was measured through its UTF-8 view for every field compared (~400
    /// instructions for curl's five fields, on every POST).
    public func firstValue(named name: StaticString, satisfies predicate: (UnsafeBufferPointer<UInt8>) -> Bool)
        -> Bool
    {
        let count = Int(parsedCount)
        guard count > 0 else {
            guard var value = self[name.description] else { return false }
            return value.withUTF8(predicate)
        }
        let tableStart = Int(tableStart)
        let nameCount = name.utf8CodeUnitCount
        return raw.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!
            var entry = base + tableStart
            for _ in 0..<count {
                defer { entry += Self.spanBytes }
                // The name's length first: most fields differ in it, and their other offsets are not read.
                let nameStart = Int(entry.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
                let nameEnd = Int(entry.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                guard nameEnd &- nameStart == nameCount,
                    Self.same(
                        UnsafeBufferPointer(
                            start: base.assumingMemoryBound(to: UInt8.self) + nameStart, count: nameCount),
                        name)
                else { continue }
                let valueStart = Int(entry.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
                let valueEnd = Int(entry.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                return predicate(
                    UnsafeBufferPointer(
                        start: base.assumingMemoryBound(to: UInt8.self) + valueStart, count: valueEnd &- valueStart))
            }
            return false
        }
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        if parsedCount == 0 { return built.compactMap { Self.same($0.name, name) ? $0.value : nil } }
        return spans.compactMap { matches($0, name) ? string($0.value) : nil }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool {
        parsedCount == 0 ? built.contains(where: { Self.same($0.name, name) }) : firstSpan(named: name) != nil
    }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(name: String, value: String) {
        makeBuilt()
        built.append((name, value))
    }

    /// Same fields in the same order (names compared exactly).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.count == rhs.count && lhs.elementsEqual(rhs, by: { $0.name == $1.name && $0.value == $1.value })
    }

    /// Turns parsed headers into built ones before a change.
    private mutating func makeBuilt() {
        guard parsedCount != 0 else {
            raw = []
            return
        }
        built = fields
        raw = []
        parsedCount = 0
        tableStart = 0
    }

    private func element(_ span: Span) -> Element { (string(span.name), string(span.value)) }

    private func string(_ range: Range<Int>) -> String {
        raw.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    /// Whether the parsed field's name is `name` (ASCII case-insensitive).
    private func matches(_ span: Span, _ name: String) -> Bool {
        raw.withUnsafeBytes { matches(span, name, in: $0) }
    }

    /// Whether the parsed field's name is `name`, its bytes in `bytes` (`raw`'s).
    @inline(__always)
    private func matches(_ span: Span, _ name: String, in bytes: UnsafeRawBufferPointer) -> Bool {
        guard span.name.count == name.utf8.count else { return false }
        let lines = bytes.assumingMemoryBound(to: UInt8.self)
        return Self.same(UnsafeBufferPointer(rebasing: lines[span.name]), name: name)
    }

    /// ASCII case-insensitive equality of field-name bytes and a name.
    static func same(_ bytes: UnsafeBufferPointer<UInt8>, name: String) -> Bool {
        guard bytes.count == name.utf8.count else { return false }
        if let result = name.utf8.withContiguousStorageIfAvailable({ other in
            for i in 0..<other.count where lowercased(bytes[i]) != lowercased(other[i]) { return false }
            return true
        }) {
            return result
        }
        return zip(bytes, name.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// ASCII case-insensitive equality of two byte strings (host names).
    static func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where lowercased(a[i]) != lowercased(b[i]) { return false }
        return true
    }

    /// ASCII case-insensitive equality of bytes and a literal (field names and tokens the parser knows).
    @inline(__always)
    static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard bytes.count == count, let base = bytes.baseAddress else { return count == 0 && bytes.isEmpty }
        // Inlined, over raw pointers: the literal folds to constants (a call with indexed access
        // cost about 20 instructions per byte, on every field the parser knows).
        let other = literal.utf8Start
        var i = 0
        while i < count {
            if lowercased(base[i]) != lowercased(other[i]) { return false }
            i += 1
        }
        return true
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

/// Whether a comma-separated header value lists `token` (ASCII case-insensitive),
/// e.g. `Connection: keep-alive, Upgrade`.
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
