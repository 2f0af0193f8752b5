import JSONCodec

/// Who runs a session: its entry in the claims bucket (key: the session's id), as JSON
/// `{"instance":"web-2","incarnation":"…"}`. The incarnation tells one start of an instance from the
/// next: a claim of an earlier start of the same instance, or of an instance whose heartbeat is gone
/// or names another incarnation, is a dead owner's, and may be taken over.
struct OwnershipClaim: Sendable, Equatable {
    var instance: String
    var incarnation: String

    var json: [UInt8] {
        JSONValue.object(JSONObject([("instance", .string(instance)), ("incarnation", .string(incarnation))])).serialized()
    }

    init(instance: String, incarnation: String) {
        self.instance = instance
        self.incarnation = incarnation
    }

    /// A claim's or a heartbeat's JSON read back; nil when it is not one.
    init?(json: [UInt8]) {
        guard let value = try? JSONParser(maxDepth: 4, maxBytes: 64 << 10).parse(json), let instance = value["instance"]?.stringValue,
            let incarnation = value["incarnation"]?.stringValue
        else { return nil }
        self.instance = instance
        self.incarnation = incarnation
    }
}
