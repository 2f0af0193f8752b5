import JSONCodec

/// Who runs a session: its entry in the claims bucket (key: the session's id), as JSON
/// `{"instance":"web-2","incarnation":"…"}`. The incarnation tells one start of an instance from the
/// next: a claim of an earlier start of the same instance, or of an instance whose heartbeat is gone
/// or names another incarnation, is a dead owner's, and may be taken over.
struct OwnershipClaim: Sendable, Equatable {
    var instance: String
    var incarnation: String
    /// Set while the instance loads the session (reads and replays its history): a claim still saying so
    /// when its instance is gone was left by an instance that died loading it, in its reactor's code or
    /// not, and the next instance quarantines the session instead of replaying into the same trap.
    var loading = false

    var json: [UInt8] {
        var fields: [(String, JSONValue)] = [("instance", .string(instance)), ("incarnation", .string(incarnation))]
        if loading { fields.append(("loading", .bool(true))) }
        return JSONValue.object(JSONObject(fields)).serialized()
    }

    init(instance: String, incarnation: String, loading: Bool = false) {
        self.instance = instance
        self.incarnation = incarnation
        self.loading = loading
    }

    /// A claim's or a heartbeat's JSON read back; nil when it is not one.
    init?(json: [UInt8]) {
        guard let value = try? JSONParser(maxDepth: 4, maxBytes: 64 << 10).parse(json),
            let instance = value["instance"]?.stringValue,
            let incarnation = value["incarnation"]?.stringValue
        else { return nil }
        self.instance = instance
        self.incarnation = incarnation
        loading = value["loading"] == .bool(true)
    }

    /// The same start of the same instance, loading or not.
    static func == (a: OwnershipClaim, b: OwnershipClaim) -> Bool {
        a.instance == b.instance && a.incarnation == b.incarnation
    }
}
