#if canImport(Glibc)
    import Glibc
#endif

/// An incremental HTTP/1.1 request parser (RFC 9112), pure: bytes in, steps out, no descriptors.
///
/// The caller keeps the bytes the parser has not consumed and passes them again, with more
/// appended, on the next call. While a head is incomplete the parser consumes nothing but
/// remembers how far it has scanned, so no byte is examined twice for the end of the head.
/// Bodies are consumed as they arrive and copied once, into the request's own storage.
struct RequestParser: Sendable {
    /// What one call produced.
    enum Step: Sendable {
        /// Everything usable was consumed; call again with more bytes.
        case needMore
        /// A complete request (head and body).
        case request(HTTPRequest)
        /// The request is refused; the connection must answer and close.
        case rejected(HTTPRejection)
    }

    let limits: HTTPParserLimits
    var phase = Phase.head(HeadScan())
    /// The head of a request whose body is being read.
    var pending: HTTPRequest?
    /// True once a head with `Expect: 100-continue` is parsed and its body has not started yet.
    var expectsContinue = false
    /// True while a request has been started (some of its bytes are seen) but not completed.
    var isMidRequest: Bool {
        if case .head(let scan) = phase { return scan.scanned > 0 }
        return true
    }
    /// True while the head is complete and the body is being read.
    var isReadingBody: Bool {
        if case .head = phase { return false }
        return true
    }

    init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    enum Phase: Sendable {
        case head(HeadScan)
        case fixedBody(remaining: Int)
        case chunked(ChunkState)
    }

    /// Progress of the search for the end of a head.
    struct HeadScan: Sendable {
        var scanned = 0
        var lineStart = 0
        var fieldLines = 0
        var requestLineEnd: Int? = nil
    }

    /// Parses as much of `buffer` as possible; `consumed` bytes must be dropped by the caller.
    /// `.needMore` means every usable byte was consumed (an incomplete head is kept by the caller).
    mutating func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> (consumed: Int, step: Step) {
        switch phase {
        case .head(let scan):
            return parseHead(buffer, scan)
        case .fixedBody(let remaining):
            let take = min(remaining, buffer.count)
            if take > 0 { expectsContinue = false }
            pending!.body.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[0..<take]))
            if take == remaining {
                return (take, finish())
            }
            phase = .fixedBody(remaining: remaining - take)
            return (take, .needMore)
        case .chunked(let state):
            if !buffer.isEmpty { expectsContinue = false }
            return parseChunked(buffer, state)
        }
    }

    /// Hands out the finished request and gets ready for the next head.
    mutating func finish() -> Step {
        phase = .head(HeadScan())
        expectsContinue = false
        let request = pending.take()!
        return .request(request)
    }

    mutating func reject(_ kind: HTTPRejection.Kind, _ message: String) -> Step {
        reject(HTTPRejection(kind, message))
    }

    /// Forgets the request in progress and reports `rejection`.
    mutating func reject(_ rejection: HTTPRejection) -> Step {
        phase = .head(HeadScan())
        pending = nil
        expectsContinue = false
        return .rejected(rejection)
    }

    private mutating func parseHead(_ buffer: UnsafeBufferPointer<UInt8>, _ start: HeadScan) -> (
        consumed: Int, step: Step
    ) {
        var scan = start
        var skipped = 0
        // RFC 9112 §2.2: empty lines before a request line are ignored.
        if scan.scanned == 0 {
            while skipped < buffer.count {
                if buffer[skipped] == .lf {
                    skipped += 1
                } else if buffer[skipped] == .cr {
                    guard skipped + 1 < buffer.count else { return (skipped, .needMore) }
                    guard buffer[skipped + 1] == .lf else {
                        return (skipped, reject(.invalidCharacter, "bare CR before the request line"))
                    }
                    skipped += 2
                } else {
                    break
                }
            }
        }
        let head = UnsafeBufferPointer(rebasing: buffer[skipped...])
        guard let base = head.baseAddress else { return (skipped, .needMore) }
        while scan.scanned < head.count {
            let searchLength = head.count - scan.scanned
            guard let found = memchr(base + scan.scanned, Int32(UInt8.lf), searchLength) else {
                scan.scanned = head.count
                break
            }
            let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            scan.scanned = newline + 1
            var lineEnd = newline
            if lineEnd > scan.lineStart && head[lineEnd - 1] == .cr { lineEnd -= 1 }
            // The same checks in the same order as for an incomplete head below, so that where
            // the input is split never changes the outcome.
            if scan.requestLineEnd == nil && lineEnd - scan.lineStart > limits.maxRequestLineBytes {
                return (
                    skipped,
                    reject(.requestLineTooLong, "the request line is longer than \(limits.maxRequestLineBytes) bytes")
                )
            }
            if scan.scanned > limits.maxHeaderBytes {
                return (
                    skipped, reject(.headerTooLarge, "the header block is larger than \(limits.maxHeaderBytes) bytes")
                )
            }
            if scan.requestLineEnd == nil {
                scan.requestLineEnd = lineEnd
            } else if lineEnd == scan.lineStart {
                let headEnd = skipped + scan.scanned
                var bodyConsumed = 0
                let step = parseCompleteHead(
                    UnsafeBufferPointer(rebasing: head[0..<scan.scanned]), requestLineEnd: scan.requestLineEnd!,
                    fieldLines: scan.fieldLines,
                    following: UnsafeBufferPointer(rebasing: buffer[headEnd...]), bodyConsumed: &bodyConsumed)
                let consumed = headEnd + bodyConsumed
                guard case .needMore = step, consumed < buffer.count else { return (consumed, step) }
                // The head announced a body: read what of it is already here.
                let (taken, bodyStep) = parse(UnsafeBufferPointer(rebasing: buffer[consumed...]))
                return (consumed + taken, bodyStep)
            } else {
                scan.fieldLines += 1
                if scan.fieldLines > limits.maxHeaderCount {
                    return (skipped, reject(.tooManyHeaders, "more than \(limits.maxHeaderCount) header fields"))
                }
            }
            scan.lineStart = scan.scanned
        }
        if scan.requestLineEnd == nil && scan.scanned - scan.lineStart > limits.maxRequestLineBytes + 1 {
            return (
                skipped,
                reject(.requestLineTooLong, "the request line is longer than \(limits.maxRequestLineBytes) bytes")
            )
        }
        if scan.scanned > limits.maxHeaderBytes {
            return (skipped, reject(.headerTooLarge, "the header block is larger than \(limits.maxHeaderBytes) bytes"))
        }
        phase = .head(scan)
        return (skipped, .needMore)
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes are exactly `literal` (a plain byte loop: `elementsEqual` against a
    /// `String`'s UTF8View is generic and several times slower, on every request line).
    @inline(__always)
    func equals(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount, let base = baseAddress else {
            return count == literal.utf8CodeUnitCount
        }
        return memcmp(base, literal.utf8Start, count) == 0
    }
}
