/// Reading a header block: `NATS/1.0[ <status>[ <description>]]\r\n`, then `name: value\r\n` lines,
/// then an empty line that ends the block exactly.
extension NATSHeaders {
    /// The headers in `block`, or why it is malformed. Lines may end in CRLF or a bare LF.
    public static func parse(_ block: UnsafeBufferPointer<UInt8>) throws(NATSProtocolViolation) -> NATSHeaders {
        var headers = NATSHeaders()
        var lines = LineReader(block)
        guard let first = lines.next() else { throw malformed("the header block has no NATS/1.0 line") }
        try headers.readStatusLine(UnsafeBufferPointer(rebasing: block[first]))
        while let line = lines.next() {
            if line.isEmpty {
                guard lines.offset == block.count else {
                    throw malformed("bytes follow the empty line that ends the header block")
                }
                return headers
            }
            guard let colon = block[line].firstIndex(of: .colon), colon > line.lowerBound else {
                throw malformed("a header line has no name followed by ':'")
            }
            let name = block[line.lowerBound..<colon]
            guard name.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw malformed("a header name contains a blank or a control byte")
            }
            var start = colon + 1
            var end = line.upperBound
            while start < end && block[start].isBlank { start += 1 }
            while end > start && block[end - 1].isBlank { end -= 1 }
            let value = block[start..<end]
            guard !value.contains(where: { ($0 < 0x20 && $0 != .tab) || $0 == 0x7F }) else {
                throw malformed("the value of a header contains a control byte")
            }
            headers.append(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
        throw malformed("the header block does not end with an empty line")
    }

    private mutating func readStatusLine(_ line: UnsafeBufferPointer<UInt8>) throws(NATSProtocolViolation) {
        let version = Array("NATS/1.0".utf8)
        guard line.count >= version.count, line.prefix(version.count).elementsEqual(version) else {
            throw Self.malformed("the header block does not start with NATS/1.0")
        }
        var index = version.count
        guard index < line.count else { return }
        guard line[index].isBlank else { throw Self.malformed("the NATS/1.0 line has bytes after the version") }
        while index < line.count && line[index].isBlank { index += 1 }
        let codeStart = index
        while index < line.count && line[index] >= UInt8(ascii: "0") && line[index] <= UInt8(ascii: "9") { index += 1 }
        guard index - codeStart == 3 else {
            if codeStart == line.count { return }
            throw Self.malformed("the status after NATS/1.0 is not a three-digit code")
        }
        status = line[codeStart..<index].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard index < line.count else { return }
        guard line[index].isBlank else { throw Self.malformed("the status code is followed by more digits or letters") }
        while index < line.count && line[index].isBlank { index += 1 }
        var end = line.count
        while end > index && line[end - 1].isBlank { end -= 1 }
        let text = line[index..<end]
        guard !text.contains(where: { ($0 < 0x20 && $0 != .tab) || $0 == 0x7F }) else {
            throw Self.malformed("the status description contains a control byte")
        }
        if !text.isEmpty { statusDescription = String(decoding: text, as: UTF8.self) }
    }

    private static func malformed(_ message: String) -> NATSProtocolViolation {
        NATSProtocolViolation(.malformedHeaders, message)
    }
}

/// Splits bytes into lines at LF, dropping a CR before it; a last line without LF is not a line.
private struct LineReader {
    let bytes: UnsafeBufferPointer<UInt8>
    /// Where the next line starts.
    var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func next() -> Range<Int>? {
        guard let newline = bytes[offset...].firstIndex(of: .lf) else { return nil }
        let start = offset
        offset = newline + 1
        var end = newline
        if end > start && bytes[end - 1] == .cr { end -= 1 }
        return start..<end
    }
}
