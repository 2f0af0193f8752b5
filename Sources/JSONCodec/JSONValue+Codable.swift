extension JSONValue: Codable {
    /// Reads any JSON value (exactly, when the decoder is ours; through the generic containers otherwise).
    public init(from decoder: any Decoder) throws {
        if let ours = decoder as? JSONDecoderImpl {
            self = ours.value
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [(String, JSONValue)] = []
            for key in object.allKeys {
                members.append((key.stringValue, try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(JSONObject(members))
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? single.decode(Int64.self) {
            self = .number(.int(int))
        } else if let uint = try? single.decode(UInt64.self) {
            self = .number(.uint(uint))
        } else if let double = try? single.decode(Double.self) {
            self = .number(.double(double))
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    /// Writes the value as itself.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .number(.int(let int)):
            var single = encoder.singleValueContainer()
            try single.encode(int)
        case .number(.uint(let uint)):
            var single = encoder.singleValueContainer()
            try single.encode(uint)
        case .number(.double(let double)):
            var single = encoder.singleValueContainer()
            try single.encode(double)
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let array):
            var unkeyed = encoder.unkeyedContainer()
            for element in array { try unkeyed.encode(element) }
        case .object(let object):
            var keyed = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in object { try keyed.encode(value, forKey: AnyKey(key)) }
        }
    }
}

extension JSONObject: Codable {
    /// Reads an object.
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONObject.self,
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "expected an object"))
        }
        self = object
    }

    /// Writes the object as itself.
    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(self).encode(to: encoder)
    }
}
