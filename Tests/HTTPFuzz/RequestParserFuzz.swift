// libFuzzer harness for the HTTP/1.1 request parser (built by .ci/fuzz with swiftc -sanitize=fuzzer).
// Besides crashes it checks an oracle: feeding the input whole, byte by byte, and split at an
// input-derived offset must give identical outcomes. Every crash found becomes a parser table case.

/// Outcomes of parsing `input` cut at `cuts`, as a connection would feed it.
func outcomes(_ input: [UInt8], cuts: [Int], limits: HTTPParserLimits) -> [String] {
    var parser = RequestParser(limits: limits)
    var kept: [UInt8] = []
    var result: [String] = []
    var start = 0
    for end in cuts + [input.count] where end >= start && end <= input.count {
        kept.append(contentsOf: input[start..<end])
        start = end
        parsing: while true {
            let (consumed, step) = kept.withUnsafeBufferPointer { parser.parse($0) }
            precondition(consumed >= 0 && consumed <= kept.count, "consumed \(consumed) of \(kept.count) bytes")
            kept.removeFirst(consumed)
            switch step {
            case .needMore:
                break parsing
            case .request(let request):
                let headers = request.headers.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
                // Derived views must never trap either.
                _ = (request.path, request.pathSegments, request.query)
                result.append(
                    "\(request.method) \(request.target) \(request.version) \(request.keepAlive) [\(headers)] "
                        + "\(request.body)"
                )
            case .rejected(let rejection):
                result.append("rejected \(rejection.kind)")
                return result
            }
        }
    }
    return result
}

let fuzzLimits: HTTPParserLimits = {
    var limits = HTTPParserLimits()
    limits.maxRequestLineBytes = 128
    limits.maxHeaderBytes = 512
    limits.maxHeaderCount = 8
    limits.maxBodyBytes = 256
    return limits
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
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
