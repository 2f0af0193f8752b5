// libFuzzer harness for the NATS server-output parser (built by .ci/fuzz-nats with swiftc -sanitize=fuzzer).
// Besides crashes it checks an oracle: feeding the input whole, byte by byte, and split at an
// input-derived offset must give identical outcomes; every range must lie inside the bytes given;
// every HMSG header block is parsed too. Every crash found becomes a case in ServerOutputParserTests.

/// Outcomes of parsing `input` cut at `cuts`, as the connection feeds it.
func outcomes(_ input: [UInt8], cuts: [Int], limits: NATSParserLimits) -> [String] {
    var parser = ServerOutputParser(limits: limits)
    var kept: [UInt8] = []
    var result: [String] = []
    var start = 0
    for end in cuts + [input.count] where end >= start && end <= input.count {
        kept.append(contentsOf: input[start..<end])
        start = end
        parsing: while true {
            let (consumed, outcome) = kept.withUnsafeBufferPointer { buffer -> (Int, String?) in
                let (consumed, step) = parser.parse(buffer)
                precondition(consumed >= 0 && consumed <= buffer.count, "consumed \(consumed) of \(buffer.count) bytes")
                return (consumed, describe(step, buffer))
            }
            guard let outcome else {
                precondition(consumed == 0, "needMore consumed \(consumed) bytes")
                break parsing
            }
            result.append(outcome)
            if outcome.hasPrefix("rejected") { return result }
            precondition(consumed > 0, "an operation consumed nothing")
            kept.removeFirst(consumed)
        }
    }
    return result
}

func describe(_ step: ServerOutputParser.Step, _ buffer: UnsafeBufferPointer<UInt8>) -> String? {
    func text(_ range: Range<Int>) -> String {
        precondition(
            range.lowerBound >= 0 && range.upperBound <= buffer.count, "range \(range) outside \(buffer.count) bytes")
        return String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
    }
    switch step {
    case .needMore: return nil
    case .rejected(let violation): return "rejected \(violation.kind)"
    case .operation(.info(let json)): return "INFO \(text(json))"
    case .operation(.error(let message)): return "ERR \(text(message))"
    case .operation(let other) where other == .ping || other == .pong || other == .ok: return "\(other)"
    case .operation(.message(let frame)):
        var headers = "-"
        if let block = frame.headerBlock {
            _ = text(block)
            do {
                let parsed = try NATSHeaders.parse(UnsafeBufferPointer(rebasing: buffer[block]))
                headers =
                    "\(parsed.status ?? 0) \(parsed.statusDescription ?? "") "
                    + "\(parsed.fields.map { "\($0.name)=\($0.value)" })"
            } catch {
                headers = "malformed \(error.kind)"
            }
        }
        return
            "MSG \(text(frame.subject)) \(frame.sid) \(frame.replyTo.map(text) ?? "-") \(headers) "
            + "\(text(frame.payload))"
    case .operation: return "?"
    }
}

let fuzzLimits = NATSParserLimits(maxControlLineBytes: 128, maxPayloadBytes: 256)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerOutputParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = outcomes(input, cuts: [], limits: fuzzLimits)
    if size > 0 {
        let split = Int(input[0]) * size / 256
        precondition(outcomes(input, cuts: [split], limits: fuzzLimits) == whole, "split at \(split) differs")
    }
    if size <= 512 {
        precondition(outcomes(input, cuts: Array(0..<size), limits: fuzzLimits) == whole, "byte-by-byte differs")
    }
    return 0
}
