/// Stored data read by a newer type: what a `State` that gained fields decodes when older data lacks them.
extension JSONValueDecoder {
    /// What ``decode(_:from:missingFrom:)`` made of stored data.
    public struct TemplateDecoding<Value> {
        /// The decoded value.
        public var value: Value
        /// The members taken from the template (`team.color`), in the order they were found missing; empty
        /// when the data decoded as it was.
        public var filled: [String]
    }

    /// Decodes `type` from `value`; a member `type` requires that `value` lacks, at any depth of nested
    /// objects, takes the template's value at the same place (`template` is usually the encoded initial
    /// state). Only what decoding finds missing is filled: an optional member that is absent stays nil
    /// (a whole-object overlay would replace it with the template's value), and a member of the
    /// template the type does not ask for is not added. Array elements have no template: a member
    /// missing inside one is an error, as is one the template lacks too.
    ///
    /// ```swift
    /// struct Score: Decodable { var home: Int; var away: Int; var note: String? }
    /// let stored = try JSONParser().parse(Array(#"{"home":3}"#.utf8))
    /// let initial = try JSONParser().parse(Array(#"{"home":0,"away":0,"note":"-"}"#.utf8))
    /// let read = try JSONValueDecoder().decode(Score.self, from: stored, missingFrom: initial)
    /// // read.value: home 3, away 0, note nil; read.filled == ["away"]
    /// ```
    public func decode<T: Decodable>(
        _ type: T.Type, from value: JSONValue, missingFrom template: JSONValue
    ) throws -> TemplateDecoding<T> {
        var value = value
        var filled: [String] = []
        while true {
            let decoder = JSONDecoderImpl(value: value, path: nil, root: nil, userInfo: userInfo)
            do {
                return TemplateDecoding(
                    value: try decoder.unbox(value, as: T.self, at: CodingPathRef(nil)), filled: filled)
            } catch let error as DecodingError {
                // Each round fills a member that was missing, so the rounds end; the bound is for a type
                // whose decoding asks for a different member every time it is run.
                guard case .keyNotFound(let key, let context) = error, filled.count < 10_000,
                    let path = Self.memberNames(context.codingPath + [key]),
                    let replacement = template.value(atMembers: path[...]),
                    let completed = value.setting(replacement, atMembers: path[...])
                else { throw JSONDecodingError(error, enumMismatch: decoder.enumMismatch) }
                value = completed
                filled.append(path.joined(separator: "."))
            }
        }
    }

    /// The member names of a coding path that runs through objects only; nil when it enters an array.
    static func memberNames(_ path: [any CodingKey]) -> [String]? {
        var names: [String] = []
        for key in path {
            if key is IndexKey || key.intValue != nil { return nil }
            names.append(key.stringValue)
        }
        return names
    }
}

extension JSONValue {
    /// The value reached through nested objects' members `names`, nil when one is not there.
    func value(atMembers names: ArraySlice<String>) -> JSONValue? {
        guard let first = names.first else { return self }
        guard case .object(let object) = self, let member = object[first] else { return nil }
        return member.value(atMembers: names.dropFirst())
    }

    /// This value with `replacement` set at the member path `names`, whose parents all exist as
    /// objects; nil when one does not.
    func setting(_ replacement: JSONValue, atMembers names: ArraySlice<String>) -> JSONValue? {
        guard let first = names.first else { return replacement }
        guard case .object(var object) = self else { return nil }
        if names.count == 1 {
            object[first] = replacement
            return .object(object)
        }
        guard let member = object[first], let changed = member.setting(replacement, atMembers: names.dropFirst()) else {
            return nil
        }
        object[first] = changed
        return .object(object)
    }
}
