import HTTPServer
import JSONCodec

#if canImport(Glibc)
    import Glibc
#endif

// How routes read their request: a JSON body (its media type matched without allocating) and integer
// query parameters, each answering the client's mistake itself (415, 400) and returning nil.
extension Exchange {
    /// Whether the request says its body is JSON (`application/json`, any parameters, or `+json`).
    var hasJSONContentType: Bool {
        request.headers.contentTypeSatisfies(Self.isJSONMediaType)
    }

    /// Compared as bytes, case-insensitively, without allocating: this runs on every POST.
    static func isJSONMediaType(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        // What nearly every client sends, compared in one go (the loop below costs ~13
        // instructions a byte).
        let usual: StaticString = "application/json"
        if bytes.count == usual.utf8CodeUnitCount && memcmp(base, usual.utf8Start, usual.utf8CodeUnitCount) == 0 {
            return true
        }
        var start = 0
        var end = 0
        while end < bytes.count && base[end] != UInt8(ascii: ";") { end += 1 }
        while start < end, base[start] == UInt8(ascii: " ") || base[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, base[end - 1] == UInt8(ascii: " ") || base[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        @inline(__always)
        func matches(_ text: StaticString, at offset: Int) -> Bool {
            let count = text.utf8CodeUnitCount
            guard offset >= start, offset + count <= end else { return false }
            let pattern = text.utf8Start
            var i = 0
            while i < count {
                let byte = base[offset + i]
                if (byte &- 65 < 26 ? byte | 0x20 : byte) != pattern[i] { return false }
                i += 1
            }
            return true
        }
        if end - start == 16 { return matches("application/json", at: start) }
        return matches("application/", at: start) && end - start > 17 && matches("+json", at: end - 5)
    }

    /// Checks the content type and returns the body, or answers 415 and returns nil.
    func jsonBody() -> [UInt8]? {
        guard hasJSONContentType else {
            fail(.unsupportedMediaType(request.headers["Content-Type"]))
            return nil
        }
        return request.body
    }

    /// The body parsed as a JSON object by `parser` (its limit is the body limit), or an error answer
    /// (415, 400 `invalid_json`) and nil.
    func jsonObject(parsingWith parser: JSONParser) -> JSONObject? {
        guard let body = jsonBody() else { return nil }
        let value: JSONValue
        do {
            value = try parser.parse(body)
        } catch {
            fail(.invalidJSON(error.message))
            return nil
        }
        guard case .object(let object) = value else {
            fail(APIError(.bodyNotObject, "the body must be a JSON object"))
            return nil
        }
        return object
    }

    /// The value of query parameter `name`, given once or repeated with the same value; nil when it is absent.
    /// Given with different values it is refused (400 `kind`), not read as the first of them.
    func soleQueryValue(_ name: String, _ kind: APIError.Kind = .invalidQuery) throws(APIError) -> String? {
        let values = request.queryValues(name)
        guard let value = values.first else { return nil }
        guard values.allSatisfy({ $0 == value }) else {
            throw APIError(kind, "\(name) is given \(values.count) times with different values: give it once")
        }
        return value
    }

    /// A non-negative integer query parameter in `range`, its default when absent, or nil after a 400.
    func integerQuery(_ name: String, default value: UInt64, range: ClosedRange<UInt64>) -> UInt64? {
        let given: String?
        do {
            given = try soleQueryValue(name)
        } catch {
            fail(error)
            return nil
        }
        guard let text = given else { return value }
        guard let number = UInt64(text), range.contains(number) else {
            fail(
                APIError(
                    .invalidQuery,
                    "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound), got "
                        + "\(JSONWriter.quoted(text))"))
            return nil
        }
        return number
    }
}
