import JSONCodec
import NATS
import Synchronization
import Tokens

/// A session's entry in the sessions bucket (key: its id), as JSON:
/// `{"reactor":"counter","version":12,"token":"<64 hex digits>","unavailable":"why","incarnation":"<16 hex digits>",`
/// `"timer":"<decimal wall nanoseconds>"}`. The timer is when the session's soonest pending timer falls due, as its
/// owner last wrote it: what tells every instance to fire it if the owner is gone by then.
/// The version is the one it had when it last left an instance's memory (the instance running it knows the
/// current one); the token is its access token's hash, never the token; the incarnation is drawn when the
/// session is created and tells it from an earlier session with the same id (absent in older entries: 0).
struct SessionMeta: Sendable, Equatable {
    var reactor: String
    var version: UInt64
    var tokenHash: SessionTokenHash?
    var unavailable: String?
    var incarnation: UInt64 = 0
    /// When its soonest pending timer falls due (wall nanoseconds); nil when it has none.
    var timer: Int64?

    var json: [UInt8] {
        var fields: [(String, JSONValue)] = [("reactor", .string(reactor)), ("version", .number(.uint(version)))]
        if let tokenHash { fields.append(("token", .string(tokenHash.storedText))) }
        if let unavailable { fields.append(("unavailable", .string(unavailable))) }
        // Text: a JSON number need not hold 64 bits exactly everywhere.
        if incarnation != 0 { fields.append(("incarnation", .string(String(incarnation, radix: 16)))) }
        if let timer { fields.append(("timer", .string(String(timer)))) }
        return JSONValue.object(JSONObject(fields)).serialized()
    }

    init(reactor: String, version: UInt64, tokenHash: SessionTokenHash? = nil, unavailable: String? = nil) {
        self.reactor = reactor
        self.version = version
        self.tokenHash = tokenHash
        self.unavailable = unavailable
    }

    /// The entry's JSON read back; nil when it is not an entry this backend wrote.
    init?(json: [UInt8]) {
        guard let value = try? JSONParser(maxDepth: 4, maxBytes: 1 << 20).parse(json),
            let reactor = value["reactor"]?.stringValue,
            let version = value["version"]?.numberValue?.uint64Value
        else { return nil }
        self.reactor = reactor
        self.version = version
        tokenHash = value["token"]?.stringValue.flatMap { SessionTokenHash(storedText: $0) }
        unavailable = value["unavailable"]?.stringValue
        incarnation = value["incarnation"]?.stringValue.flatMap { UInt64($0, radix: 16) } ?? 0
        timer = value["timer"]?.stringValue.flatMap { Int64($0) }
    }
}

/// Every stored session as the sessions bucket says, mirrored in memory: updated at once by this
/// instance's own writes and by the bucket's watcher for everyone's. An entry only moves forward (a
/// higher revision); a deleted one stays as a tombstone with its revision, so an older put read late
/// does not bring it back.
struct SessionCatalog: Sendable {
    struct Entry: Sendable {
        var meta: SessionMeta?
        var revision: UInt64
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var count = 0

    /// The metadata of a live session.
    subscript(id: String) -> SessionMeta? { entries[id]?.meta }

    /// The revision of a session's latest entry (live or deleted), 0 when never seen.
    func revision(of id: String) -> UInt64 { entries[id]?.revision ?? 0 }

    /// Applies an entry at `revision` (nil meta: deleted), unless a newer one is known; true when it
    /// replaced the live session's access token.
    @discardableResult
    mutating func apply(_ id: String, _ meta: SessionMeta?, revision: UInt64) -> Bool {
        let old = entries[id]
        if let old, old.revision >= revision { return false }
        if old?.meta != nil { count -= 1 }
        if meta != nil { count += 1 }
        var meta = meta
        // The same session (no deletion between): its version never goes back, also when this
        // instance raised it before the bucket said so.
        if let known = old?.meta?.version, let version = meta?.version, version < known { meta?.version = known }
        entries[id] = Entry(meta: meta, revision: revision)
        guard let before = old?.meta?.tokenHash, let after = meta?.tokenHash else { return false }
        return before != after
    }

    /// Raises a live session's version to one this instance saw it reach (its log was released), at
    /// once: the bucket's update follows, and until then the listing and time travel need it.
    mutating func raiseVersion(of id: String, to version: UInt64) {
        guard var entry = entries[id], let known = entry.meta?.version, known < version else { return }
        entry.meta?.version = version
        entries[id] = entry
    }

    /// Applies a message of the sessions bucket (`$KV.<bucket>.<id>`); the session's id when it replaced
    /// the session's access token.
    mutating func apply(_ message: StoredMessage) -> String? {
        guard let dot = message.subject.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let id = String(message.subject[message.subject.utf8.index(after: dot)...])
        switch message.headers["KV-Operation"] {
        case "DEL"?, "PURGE"?:
            apply(id, nil, revision: message.sequence)
            return nil
        default:
            // An entry this backend cannot read is kept as a session that cannot be served.
            let meta =
                SessionMeta(json: message.payload)
                ?? SessionMeta(reactor: "", version: 0, unavailable: "its entry in the sessions bucket is not readable")
            return apply(id, meta, revision: message.sequence) ? id : nil
        }
    }
}

/// The catalog behind a lock, shared with the bucket's watcher.
final class CatalogMirror: Sendable {
    private let catalog = Mutex(SessionCatalog())
    /// Told the id of a session whose access token the watcher saw replaced (by any instance).
    private let tokenListener = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// Told a session's soonest timer when the watcher saw it change (written by any instance).
    private let timerListener = Mutex<(@Sendable (String, Int64?) -> Void)?>(nil)

    func withLock<T: Sendable>(_ body: (inout SessionCatalog) -> T) -> T {
        catalog.withLock { body(&$0) }
    }

    /// Applies a message of the bucket's watcher; a replaced token is told to the listener, outside the lock.
    func apply(_ message: StoredMessage) {
        let (replaced, timer) = catalog.withLock { catalog -> (String?, (String, Int64?)?) in
            guard let dot = message.subject.utf8.lastIndex(of: UInt8(ascii: ".")) else { return (nil, nil) }
            let id = String(message.subject[message.subject.utf8.index(after: dot)...])
            let before = catalog[id]?.timer
            let replaced = catalog.apply(message)
            let after = catalog[id]?.timer
            return (replaced, before != after ? (id, after) : nil)
        }
        if let timer { timerListener.withLock { $0 }?(timer.0, timer.1) }
        guard let replaced else { return }
        tokenListener.withLock { $0 }?(replaced)
    }

    /// Sets what is told of timer times changed in the bucket (the service's timer index).
    func onTimerChanged(_ listener: @escaping @Sendable (String, Int64?) -> Void) {
        timerListener.withLock { $0 = listener }
    }

    /// Sets what is told of tokens replaced (the sessions in memory end the streams opened with the old one).
    func onTokenReplaced(_ listener: @escaping @Sendable (String) -> Void) {
        tokenListener.withLock { $0 = listener }
    }
}
