/// What one pass over a head's field lines finds in the few fields that decide framing, persistence
/// and the request's host. Plain values (positions in the head, counts, flags): it is copied and
/// dropped without reference counting, where an array of codings cost ~400 instructions per request.
struct FieldLines {
    /// How many `Host` fields there were, and where the first one's value lies in the head.
    var hostCount = 0
    var host: Range<Int> = 0..<0
    var contentLength: Int? = nil
    /// Transfer codings named, in all `Transfer-Encoding` fields together.
    var codingCount = 0
    /// How many of them are `chunked`, and whether the last one is.
    var chunkedCount = 0
    var lastCodingIsChunked = false
    /// Where the first coding lies in the head (for the message refusing it).
    var firstCoding: Range<Int> = 0..<0
    var connectionClose = false
    var connectionKeepAlive = false
    var expectContinue = false
    /// Where the first `Content-Type` field's value lies in the head, if there is one: kept with the headers,
    /// so the route that reads it (every POST) need not search the fields again.
    var contentType: Range<Int>? = nil
}

extension RequestParser {
    /// Splits the field lines of `head` from `start` to the empty line that ends it, in one pass per
    /// line: the name up to the colon (token bytes), then the value up to the line end (no control
    /// bytes). Errors are those of the checks in this order: line folding, colon, whitespace before
    /// the colon, the first byte of the name that is not a token byte, the first control byte of the
    /// value, then a `Content-Length` that is not a number or disagrees with an earlier one. Returns
    /// the fields; what the parser acts on is noted in `fields`.
    @inline(__always)
    static func parseFieldLines(
        _ head: UnsafeBufferPointer<UInt8>, from start: Int, count: Int, keeping target: UnsafeBufferPointer<UInt8>,
        noting fields: inout FieldLines
    ) throws(HTTPRejection) -> HTTPHeaders {
        if count == 0 {
            let noTable = UnsafeMutableRawBufferPointer(start: nil, count: 0)
            _ = try parseFieldLines(head, from: start, count: 0, noting: &fields, into: noTable)
            return HTTPHeaders()
        }
        // The field lines (with the empty line that ends them) and their span table are laid out in a
        // temporary buffer (on the stack for a usual head), then copied into the one array the headers keep:
        // an empty array reserved at the size and appended to cost ~180 instructions more, per request. The
        // request's `target` goes behind the table, so the request needs no allocation of its own for it.
        let lineBytes = head.count - start
        let tableBytes = count * HTTPHeaders.spanBytes
        return try withUnsafeTemporaryAllocation(
            of: UInt8.self, capacity: lineBytes + tableBytes + target.count
        ) { scratch throws(HTTPRejection) -> HTTPHeaders in
            let base = scratch.baseAddress!
            base.update(from: head.baseAddress! + start, count: lineBytes)
            (base + lineBytes + tableBytes).update(from: target.baseAddress!, count: target.count)
            let table = UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: scratch[lineBytes...]))
            _ = try parseFieldLines(head, from: start, count: count, noting: &fields, into: table)
            // The field lines are kept as bytes, once; a field's Strings are made only if it is read.
            return HTTPHeaders(
                raw: Array(UnsafeBufferPointer(scratch)), fieldCount: count, tableStart: lineBytes,
                contentType: fields.contentType.map { ($0.lowerBound - start)..<($0.upperBound - start) })
        }
    }

    /// The pass of ``parseFieldLines(_:from:count:noting:)`` over the `count` lines from `start`, writing
    /// each field's span into `table` (``HTTPHeaders/spanBytes`` each, in order); returns where the empty
    /// line that ends the head starts.
    @inline(__always)
    static func parseFieldLines(
        _ head: UnsafeBufferPointer<UInt8>, from start: Int, count: Int, noting fields: inout FieldLines,
        into table: UnsafeMutableRawBufferPointer
    ) throws(HTTPRejection) -> Int {
        var entry = table.baseAddress
        var spansLeft = count
        var lineStart = start
        // Read once: the lazily made global behind it cost a `swift_once` call per line.
        let byteClasses = ByteClass.table
        // Indexes step with `&+`: they stay within the head, and an overflow check was a fifth of each byte's cost.
        // The head ends with an empty line, so every line has its LF and no index runs past the end.
        while true {
            var index = lineStart
            let first = head[index]
            if first == .lf || (first == .cr && head[index + 1] == .lf) { break }
            if first == .space || first == .tab {
                throw HTTPRejection(
                    .obsoleteLineFolding, "obsolete line folding (a field line starting with whitespace)")
            }
            var badNameByte: UInt8? = nil
            while true {
                let byte = head[index]
                if byteClasses[Int(byte)] & ByteClass.token != 0 {
                    index &+= 1
                    continue
                }
                if byte == .colon { break }
                if byte == .lf { throw HTTPRejection(.malformedHeader, "a header line has no field name and colon") }
                if badNameByte == nil { badNameByte = byte }
                index &+= 1
            }
            let colon = index
            if colon == lineStart {
                throw HTTPRejection(.malformedHeader, "a header line has no field name and colon")
            }
            if head[colon - 1] == .space || head[colon - 1] == .tab {
                throw HTTPRejection(.malformedHeader, "whitespace between a field name and the colon")
            }
            if let byte = badNameByte {
                if byte < 0x20 || byte == 0x7F {
                    throw HTTPRejection(.invalidCharacter, "control character in a field name")
                }
                throw HTTPRejection(.malformedHeader, "a field name contains a character that is not allowed")
            }
            index &+= 1
            while head[index] == .space || head[index] == .tab { index &+= 1 }
            let valueStart = index
            // Eight bytes at a time up to the first control byte (the line's end is one): a value's bytes cost
            // ~7 instructions each one by one. The byte loop below takes over at that byte and judges it as
            // before (a tab goes on, CR LF or LF ends the line, any other is refused).
            if let base = head.baseAddress {
                while index &+ 8 <= head.count {
                    let marks = Self.controlByteMarks(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
                    if marks != 0 {
                        index &+= marks.trailingZeroBitCount &>> 3
                        break
                    }
                    index &+= 8
                }
            }
            while true {
                let byte = head[index]
                if (byte >= 0x20 && byte != 0x7F) || byte == .tab {
                    index &+= 1
                    continue
                }
                if byte == .lf || (byte == .cr && head[index + 1] == .lf) { break }
                throw HTTPRejection(
                    .invalidCharacter,
                    byte == 0
                        ? "NUL in a field value"
                        : (byte == .cr ? "bare CR in a field value" : "control character in a field value"))
            }
            let next = head[index] == .lf ? index + 1 : index + 2
            var valueEnd = index
            while valueEnd > valueStart && (head[valueEnd - 1] == .space || head[valueEnd - 1] == .tab) {
                valueEnd -= 1
            }
            // The scan that found the end of the head counted these lines; should the two ever disagree,
            // the request is refused rather than the table overrun.
            guard spansLeft > 0, let at = entry else {
                throw HTTPRejection(.malformedHeader, "the header block's lines could not be read consistently")
            }
            spansLeft -= 1
            HTTPHeaders.writeSpan(
                HTTPHeaders.Span(
                    name: (lineStart - start)..<(colon - start), value: (valueStart - start)..<(valueEnd - start)),
                at: at)
            entry = at + HTTPHeaders.spanBytes
            try fields.note(
                name: UnsafeBufferPointer(rebasing: head[lineStart..<colon]), head: head, value: valueStart..<valueEnd)
            lineStart = next
        }
        return lineStart
    }
}

extension RequestParser {
    /// Marks (bit 7 of a byte) the control bytes (below 0x20, or DEL) among the eight bytes of `word`, the
    /// first in memory lowest: the bytes a field value may not hold besides tab, and the line's end. Zero
    /// exactly when there is none, and the lowest mark is always a control byte (a subtraction's borrow
    /// runs only upwards from one, so only marks above it may be wrong); bytes from 0x80 up (obs-text) are
    /// never marked for themselves.
    @inline(__always)
    static func controlByteMarks(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below = (word &- ones &* 0x20) & ~word & highs
        let del = word ^ (ones &* 0x7F)
        return below | ((del &- ones) & ~del & highs)
    }
}

extension FieldLines {
    /// Takes note of a field the parser acts on (`Host`, framing, persistence, `Expect`); its value
    /// lies at `range` in `head`.
    @inline(__always)
    mutating func note(name: UnsafeBufferPointer<UInt8>, head: UnsafeBufferPointer<UInt8>, value range: Range<Int>)
        throws(HTTPRejection)
    {
        let value = UnsafeBufferPointer(rebasing: head[range])
        switch name.count {
        case 4 where HTTPHeaders.same(name, "Host"):
            if hostCount == 0 { host = range }
            hostCount += 1
        case 14 where HTTPHeaders.same(name, "Content-Length"):
            // The usual single number, read straight from the bytes (splitting a String is
            // Character-based and costs more than the rest of the head).
            if let length = RequestParser.parseLength(value) {
                if let earlier = contentLength, earlier != length {
                    throw HTTPRejection(.invalidContentLength, "differing Content-Length values")
                }
                contentLength = length
                return
            }
            let text = String(decoding: value, as: UTF8.self)
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let length = RequestParser.parseLength(item.trimmingSpaces) else {
                    throw HTTPRejection(
                        .invalidContentLength, "Content-Length \"\(text)\" is not a non-negative decimal number")
                }
                if let earlier = contentLength, earlier != length {
                    throw HTTPRejection(.invalidContentLength, "differing Content-Length values")
                }
                contentLength = length
            }
        case 17 where HTTPHeaders.same(name, "Transfer-Encoding"):
            noteCodings(head, range)
        case 10 where HTTPHeaders.same(name, "Connection"):
            let text = String(decoding: value, as: UTF8.self)
            if headerValue(text, contains: "close") { connectionClose = true }
            if headerValue(text, contains: "keep-alive") { connectionKeepAlive = true }
        case 6 where HTTPHeaders.same(name, "Expect"):
            if HTTPHeaders.same(value, "100-continue") { expectContinue = true }
        case 12 where contentType == nil && Self.isContentTypeName(name.baseAddress!):
            contentType = range
        default:
            break
        }
    }

    /// Whether the 12 token bytes at `name` are `Content-Type` in any case, compared a word at a time: a byte
    /// OR 0x20 is a lowercase letter only for that letter in either case, and is `-` only for `-` or CR (never
    /// in a name, whose bytes are tokens). The byte loop of ``HTTPHeaders/same(_:_:)`` cost ~120 instructions.
    @inline(__always)
    static func isContentTypeName(_ name: UnsafePointer<UInt8>) -> Bool {
        let raw = UnsafeRawPointer(name)
        // "content-" and "type", little-endian.
        let head = raw.loadUnaligned(as: UInt64.self) | 0x2020_2020_2020_2020
        let tail = raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self) | 0x2020_2020
        return head == 0x2D74_6E65_746E_6F63 && tail == 0x6570_7974
    }

    /// Counts the codings of a `Transfer-Encoding` list (empty items do not count).
    mutating func noteCodings(_ head: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        var index = range.lowerBound
        while index < range.upperBound {
            var end = index
            while end < range.upperBound && head[end] != UInt8(ascii: ",") { end += 1 }
            var first = index
            var last = end
            while first < last && (head[first] == .space || head[first] == .tab) { first += 1 }
            while last > first && (head[last - 1] == .space || head[last - 1] == .tab) { last -= 1 }
            if first < last {
                if codingCount == 0 { firstCoding = first..<last }
                codingCount += 1
                lastCodingIsChunked = HTTPHeaders.same(UnsafeBufferPointer(rebasing: head[first..<last]), "chunked")
                if lastCodingIsChunked { chunkedCount += 1 }
            }
            index = end + 1
        }
    }
}
