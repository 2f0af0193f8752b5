extension RequestParser {
    /// Where the chunked decoder is (RFC 9112 §7.1); every byte fed is consumed.
    enum ChunkState: Sendable {
        case size(value: Int, digits: Int)
        case sizeExtension(value: Int, length: Int)
        case sizeLF(value: Int)
        case data(remaining: Int)
        case dataCR
        case dataLF
        case trailer(lineLength: Int, total: Int)
        case trailerLF(lineLength: Int, total: Int)
    }

    /// Longest chunk extension accepted (extensions are ignored, but not without bound).
    static let maxChunkExtensionBytes = 4096

    mutating func parseChunked(_ buffer: UnsafeBufferPointer<UInt8>, _ start: ChunkState) -> (consumed: Int, step: Step)
    {
        var state = start
        var index = 0
        while index < buffer.count {
            let byte = buffer[index]
            switch state {
            case .size(let value, let digits):
                if let digit = PercentDecoding.hexValue(byte) {
                    guard digits < 15 else { return (index, reject(.invalidChunk, "chunk size has too many digits")) }
                    state = .size(value: value << 4 | Int(digit), digits: digits + 1)
                } else if digits == 0 {
                    return (index, reject(.invalidChunk, "a chunk size must start with a hexadecimal digit"))
                } else if byte == UInt8(ascii: ";") || byte == .space || byte == .tab {
                    state = .sizeExtension(value: value, length: 0)
                } else if byte == .cr {
                    state = .sizeLF(value: value)
                } else if byte == .lf {
                    if let step = endOfSizeLine(value, &state) { return (index + 1, step) }
                } else {
                    return (index, reject(.invalidChunk, "invalid character in a chunk size"))
                }
            case .sizeExtension(let value, let length):
                if byte == .cr {
                    state = .sizeLF(value: value)
                } else if byte == .lf {
                    if let step = endOfSizeLine(value, &state) { return (index + 1, step) }
                } else if (byte < 0x20 && byte != .tab) || byte == 0x7F {
                    return (index, reject(.invalidChunk, "control character in a chunk extension"))
                } else if length >= Self.maxChunkExtensionBytes {
                    return (
                        index, reject(.invalidChunk, "chunk extension longer than \(Self.maxChunkExtensionBytes) bytes")
                    )
                } else {
                    state = .sizeExtension(value: value, length: length + 1)
                }
            case .sizeLF(let value):
                guard byte == .lf else { return (index, reject(.invalidChunk, "bare CR in a chunk size line")) }
                if let step = endOfSizeLine(value, &state) { return (index + 1, step) }
            case .data(let remaining):
                let take = min(remaining, buffer.count - index)
                pending!.body.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index..<(index + take)]))
                index += take
                state = take == remaining ? .dataCR : .data(remaining: remaining - take)
                continue
            case .dataCR:
                if byte == .cr {
                    state = .dataLF
                } else if byte == .lf {
                    state = .size(value: 0, digits: 0)
                } else {
                    return (index, reject(.invalidChunk, "chunk data is longer than its size"))
                }
            case .dataLF:
                guard byte == .lf else { return (index, reject(.invalidChunk, "bare CR after chunk data")) }
                state = .size(value: 0, digits: 0)
            case .trailer(let lineLength, let total):
                if byte == .cr {
                    state = .trailerLF(lineLength: lineLength, total: total)
                } else if byte == .lf {
                    if lineLength == 0 { return (index + 1, finish()) }
                    state = .trailer(lineLength: 0, total: total)
                } else {
                    guard total < limits.maxHeaderBytes else {
                        return (
                            index, reject(.headerTooLarge, "trailer section larger than \(limits.maxHeaderBytes) bytes")
                        )
                    }
                    state = .trailer(lineLength: lineLength + 1, total: total + 1)
                }
            case .trailerLF(let lineLength, let total):
                guard byte == .lf else { return (index, reject(.invalidChunk, "bare CR in a trailer")) }
                if lineLength == 0 { return (index + 1, finish()) }
                state = .trailer(lineLength: 0, total: total)
            }
            index += 1
        }
        phase = .chunked(state)
        return (index, .needMore)
    }

    /// After a chunk-size line: the last chunk starts the trailers; others must fit the body limit.
    private mutating func endOfSizeLine(_ size: Int, _ state: inout ChunkState) -> Step? {
        if size == 0 {
            state = .trailer(lineLength: 0, total: 0)
            return nil
        }
        if pending!.body.count + size > limits.maxBodyBytes {
            return reject(.bodyTooLarge, "the chunked body is larger than \(limits.maxBodyBytes) bytes")
        }
        state = .data(remaining: size)
        return nil
    }
}
