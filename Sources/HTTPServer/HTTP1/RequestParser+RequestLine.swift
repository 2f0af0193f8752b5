/// The three parts of a request line (RFC 9112 §3).
struct RequestLine {
    var method: HTTPMethod
    /// Where the target lies in the line (and in the head it starts): no `String` is made for it while parsing.
    var targetRange: Range<Int>
    var version: HTTPVersion
    /// The target is `http://…` or `https://…`, not `/…` or `*`.
    var isAbsoluteForm = false

    /// The target as text, from `head` (the bytes the line was parsed from).
    func target(in head: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: head[targetRange]), as: UTF8.self)
    }
}

extension RequestParser {
    /// Parses `method SP request-target SP HTTP-version`, the line without its end. Checks, in this
    /// order: the two single spaces, the version, the method token (any but CONNECT), the target's
    /// bytes, its form (an absolute-form target's authority is checked with the `Host` field).
    @inline(__always)
    static func parseRequestLine(_ line: UnsafeBufferPointer<UInt8>) throws(HTTPRejection) -> RequestLine {
        guard let firstSpace = line.firstIndex(of: .space),
            let secondSpace = line[(firstSpace + 1)...].firstIndex(of: .space),
            firstSpace > 0, secondSpace > firstSpace + 1, secondSpace + 1 < line.count
        else {
            throw HTTPRejection(.malformedRequestLine, "the request line is not `METHOD target HTTP/x.y`")
        }
        let methodBytes = UnsafeBufferPointer(rebasing: line[0..<firstSpace])
        let targetBytes = UnsafeBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        let versionBytes = UnsafeBufferPointer(rebasing: line[(secondSpace + 1)...])

        guard versionBytes.count == 8, UnsafeBufferPointer(rebasing: versionBytes[0..<5]).equals("HTTP/"),
            versionBytes[6] == UInt8(ascii: "."),
            let major = PercentDecoding.decimalDigit(versionBytes[5]),
            let minor = PercentDecoding.decimalDigit(versionBytes[7])
        else {
            if versionBytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw HTTPRejection(.invalidCharacter, "control character in the request line")
            }
            throw HTTPRejection(.malformedRequestLine, "the request line does not end in HTTP/x.y")
        }
        guard major == 1 else {
            throw HTTPRejection(.unsupportedVersion, "HTTP/\(major).\(minor) is not supported; use HTTP/1.1")
        }
        guard methodBytes.allSatisfy(\.isTokenCharacter) else {
            throw HTTPRejection(.malformedRequestLine, "the method is not a token")
        }
        let method = HTTPMethod(bytes: methodBytes)
        if method == .CONNECT {
            throw HTTPRejection(.unsupportedMethod, "CONNECT is not implemented: this server is not a proxy")
        }
        for byte in targetBytes where byte <= 0x20 || byte >= 0x7F {
            if byte < 0x20 || byte == 0x7F {
                throw HTTPRejection(.invalidCharacter, "control character in the request target")
            }
            throw HTTPRejection(
                .malformedRequestLine, "the request target contains a byte that must be percent-encoded")
        }
        var absolute = false
        if targetBytes[0] != UInt8(ascii: "/") {
            let target = String(decoding: targetBytes, as: UTF8.self)
            let lower = target.lowercased()
            absolute = lower.hasPrefix("http://") || lower.hasPrefix("https://")
            guard absolute || (target == "*" && method == .OPTIONS) else {
                throw HTTPRejection(
                    .malformedRequestLine, "the request target must start with / or be an absolute http URI")
            }
        }
        return RequestLine(
            method: method, targetRange: (firstSpace + 1)..<secondSpace,
            version: HTTPVersion(major: 1, minor: Int(minor)), isAbsoluteForm: absolute)
    }
}
