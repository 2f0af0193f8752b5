import Synchronization

/// Decodes one action from a request body in the wire shape `{"type": "<case>", …payload}`.
///
/// Works for synthesized enum `Codable` (see `JSONValueDecoder`) and for hand-written `Codable` that reads
/// `"type"`. An unknown `"type"` is `.unknownType` when the type is a synthesized enum, adopts
/// `ActionCaseNames`, or its decoder fails on the `"type"` field itself; everything else is `.invalidPayload`.
///
/// `parser` sets the limits (a server passes one whose `maxBytes` is its request-body limit, so a body it
/// accepted is never refused as too large here).
///
/// ```swift
/// do { let action = try decodeAction(Counter.Action.self, from: body) }
/// catch { respond(422, code: error.code, message: error.message) }
/// ```
public func decodeAction<A: Decodable>(
    _ type: A.Type, from bytes: some Collection<UInt8>, parser: JSONParser = JSONParser()
) throws(ActionDecodingError) -> A {
    let value: JSONValue
    do {
        value = try parser.parse(bytes)
    } catch {
        throw .invalidJSON(error)
    }
    return try decodeAction(type, from: value)
}

/// Decodes one action, reusing the decoded value for bodies that are exactly `{"type": "<case>"}`.
///
/// Chosen over the general overload when `A: Sendable`, so the hot path (`{"type":"increase"}`) skips
/// parsing and decoding after the first time. Assumes decoding is deterministic, as synthesized `Codable` is.
@inlinable
public func decodeAction<A: Decodable & Sendable>(
    _ type: A.Type, from bytes: some Collection<UInt8>, parser: JSONParser = JSONParser()
) throws(ActionDecodingError) -> A {
    // Inlinable so the cache hit is specialized where it is called: unspecialized, reaching the
    // bytes and casting the cached value cost more than the rest of the lookup.
    let recent = bytes.withContiguousStorageIfAvailable { buffer in
        BareAction.nameRange(in: buffer).flatMap {
            BareAction.recentValue(type: ObjectIdentifier(A.self), name: UnsafeBufferPointer(rebasing: buffer[$0]))
        }
    }
    if let recent = recent ?? nil, let cached = recent.value(as: A.self) {
        return cached
    }
    return try decodeActionFillingCache(type, from: bytes, parser: parser, json: false, encode: nil).action
}

/// Decodes one action and returns it with its canonical JSON: the decoded value encoded again in the
/// same `{"type": …}` shape (``encodeAction(_:)``), so members the type does not read are gone and
/// whitespace is not kept; what a log keeps is what the reactor got. An action type that is not
/// `Encodable` (or does not encode as such an object) gets the body as parsed, written compactly.
///
/// Bare actions (`{"type":"increase"}`) come from the cache with their JSON: one shared buffer.
/// `encode`, when given, encodes an action (a closure specialized for `A` where it is known to be
/// `Encodable`; without it the type is asked at run time, which costs a conformance lookup per action).
@inlinable
public func decodeActionWithJSON<A: Decodable & Sendable>(
    _ type: A.Type, from bytes: some Collection<UInt8>, parser: JSONParser = JSONParser(),
    encode: ((A) throws -> [UInt8])? = nil
) throws(ActionDecodingError) -> (action: A, json: [UInt8]) {
    let recent = bytes.withContiguousStorageIfAvailable { buffer in
        BareAction.nameRange(in: buffer).flatMap {
            BareAction.recentValue(type: ObjectIdentifier(A.self), name: UnsafeBufferPointer(rebasing: buffer[$0]))
        }
    }
    if let recent = recent ?? nil, let cached = recent.value(as: A.self) {
        return (cached, recent.json)
    }
    return try decodeActionFillingCache(type, from: bytes, parser: parser, json: true, encode: encode)
}

/// `decodeAction` past the recent-actions list: the bare-action cache, else parses and decodes, and
/// remembers bare actions. The JSON is empty for a body that is not bare unless `json` is set.
@usableFromInline
func decodeActionFillingCache<A: Decodable & Sendable>(
    _ type: A.Type, from bytes: some Collection<UInt8>, parser: JSONParser, json: Bool, encode: ((A) throws -> [UInt8])?
) throws(ActionDecodingError) -> (action: A, json: [UInt8]) {
    let bare = bytes.withContiguousStorageIfAvailable { BareAction.caseName(in: $0) } ?? nil
    guard let bare else {
        let value: JSONValue
        do {
            value = try parser.parse(bytes)
        } catch {
            throw .invalidJSON(error)
        }
        let action = try decodeAction(type, from: value)
        return (action, json ? canonicalJSON(of: action, parsed: value, encode: encode) : [])
    }
    let key = BareAction.Key(type: ObjectIdentifier(A.self), name: bare)
    if let cached = BareAction.cache.withLock({ $0[key] }), let action = cached.value(as: A.self) {
        BareAction.remember(type: key.type, name: bare, cached: cached)
        return (action, cached.json)
    }
    let parsed = JSONValue.object(JSONObject([("type", .string(bare))]))
    let action = try decodeAction(type, from: parsed)
    let cached = BareAction.Cached(value: action, json: canonicalJSON(of: action, parsed: parsed, encode: encode))
    BareAction.cache.withLock { cache in
        if cache.count < BareAction.capacity { cache[key] = cached }
    }
    BareAction.remember(type: key.type, name: bare, cached: cached)
    return (action, cached.json)
}

/// The action encoded again in the wire shape, else (not `Encodable`, or not encoding as an object
/// with a string `"type"`) the parsed body written compactly.
@usableFromInline
func canonicalJSON<A>(of action: A, parsed value: JSONValue, encode: ((A) throws -> [UInt8])?) -> [UInt8] {
    if let encode, let json = try? encode(action) {
        // The writer puts "type" first for every action it writes in the wire shape; anything else
        // gets the full check.
        if json.starts(with: #"{"type":""#.utf8) { return json }
        if case .object(let object)? = try? JSONParser(maxDepth: .max, maxBytes: .max).parse(json),
            case .string? = object["type"]
        {
            return json
        }
        return value.serialized()
    }
    if let encodable = action as? any Encodable, let json = try? encodeAction(encodable) { return json }
    return value.serialized()
}

/// Decodes one action from an already parsed body.
public func decodeAction<A: Decodable>(_ type: A.Type, from value: JSONValue) throws(ActionDecodingError) -> A {
    guard case .object(let object) = value else { throw .notAnObject }
    guard let typeMember = object["type"] else { throw .missingType }
    guard case .string(let name) = typeMember else { throw .typeNotString }
    if let named = A.self as? any ActionCaseNames.Type, !ActionCaseNameTable.names(of: named).contains(name) {
        throw .unknownType(name)
    }
    let decoder = JSONDecoderImpl(value: value, path: nil, root: nil, userInfo: [:])
    do {
        return try A(from: decoder)
    } catch let error as DecodingError {
        if decoder.unmatchedCase == name { throw .unknownType(name) }
        let decodingError = JSONDecodingError(error, enumMismatch: decoder.enumMismatch)
        if decodingError.field == "type" { throw .unknownType(name) }
        throw .invalidPayload(type: name, field: decodingError.field, message: decodingError.message)
    } catch {
        throw .invalidPayload(type: name, field: nil, message: "\(error)")
    }
}

/// Encodes one action in the wire shape `{"type": "<case>", …payload}` as compact UTF-8 JSON.
///
/// Throws `EncodingError.invalidValue` when the value does not encode as an object with a string `"type"`.
public func encodeAction<A: Encodable>(_ action: A) throws -> [UInt8] {
    let value = try JSONValueEncoder().encodeValue(action)
    guard case .object(let object) = value, case .string? = object["type"] else {
        throw EncodingError.invalidValue(
            action,
            EncodingError.Context(
                codingPath: [],
                debugDescription:
                    "\(A.self) encodes as \(CodingPathFormat.describe(value)), not an object with a string \"type\""))
    }
    return value.serialized()
}
