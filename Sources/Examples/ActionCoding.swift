/// The wire shape of every example action: a JSON object whose `"type"` names the case and whose other
/// members are its payload, e.g. `{"type": "toggle", "id": 3}`.
struct WireKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    static let type = WireKey("type")
}

extension Decoder {
    /// The action object and its `"type"`.
    func actionContainer() throws -> (type: String, container: KeyedDecodingContainer<WireKey>) {
        let container = try container(keyedBy: WireKey.self)
        return (try container.decode(String.self, forKey: .type), container)
    }
}

extension KeyedDecodingContainer<WireKey> {
    /// The error for a `"type"` that names no case, listing the ones that do.
    func unknownType(_ type: String, expected: [String]) -> DecodingError {
        DecodingError.dataCorruptedError(
            forKey: .type, in: self,
            debugDescription: "unknown action type \"\(type)\"; expected one of: \(expected.joined(separator: ", "))")
    }
}

extension Encoder {
    /// Starts an action object with its `"type"`.
    func actionContainer(type: String) throws -> KeyedEncodingContainer<WireKey> {
        var container = container(keyedBy: WireKey.self)
        try container.encode(type, forKey: .type)
        return container
    }
}
