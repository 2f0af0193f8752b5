import Synchronization
import Tokens

/// An event stream opened with a session credential (a token, a JWT) that must end once that credential
/// stops being valid: its part of each named session ends with `unauthorized`.
protocol RevocableStream: AnyObject, Sendable {
    /// Ends what the stream follows of session `id` (of every session when nil) with `unauthorized`,
    /// `message` saying why. Called with no lock held; does nothing for a part that has already ended.
    func revoke(_ id: String?, message: String)
}

/// The streams opened with each session's capability token (`auth.sessions=token`), each noted with the
/// stored hash its token matched, so that replacing the token ends them at once: nothing is checked per
/// event, the replacement looks its streams up here. Streams are held weakly and forgotten once gone
/// (swept when the table has doubled since the last sweep), so a stream that ends by itself needs no call.
///
/// ```swift
/// streams.register(stream, for: "a", matched: hash)
/// if store.accessTokenHash(for: "a") != hash { stream.revoke("a", message: …) }   // replaced in between
/// streams.revoke("a", current: newHash, message: "the session's token was replaced")
/// ```
final class RevocableStreams: Sendable {
    private struct Entry {
        weak var stream: (any RevocableStream)?
        /// The stored hash the stream's token matched when it opened.
        let matched: SessionTokenHash
    }

    private struct Table {
        var bySession: [String: [Entry]] = [:]
        var count = 0
        /// The entry count at which the next sweep of ended streams runs.
        var sweepAt = 64
    }

    private let table = Mutex(Table())

    init() {}

    /// Notes that `stream` follows session `id` with a token that matched the stored hash `matched`. The
    /// caller then compares `matched` with the stored hash again: a replacement that came before this
    /// call ended nothing of the stream.
    func register(_ stream: any RevocableStream, for id: String, matched: SessionTokenHash) {
        table.withLock { table in
            table.bySession[id, default: []].append(Entry(stream: stream, matched: matched))
            table.count += 1
            guard table.count >= table.sweepAt else { return }
            table.bySession = table.bySession.compactMapValues { entries in
                let live = entries.filter { $0.stream != nil }
                return live.isEmpty ? nil : live
            }
            table.count = table.bySession.values.reduce(0) { $0 + $1.count }
            table.sweepAt = max(64, table.count * 2)
        }
    }

    /// Ends the part of session `id` of every stream registered for it with a token other than the one
    /// whose stored hash is `current` (all of them when nil); returns how many it ended.
    @discardableResult
    func revoke(_ id: String, current: SessionTokenHash?, message: String) -> Int {
        let streams = table.withLock { table -> [any RevocableStream] in
            guard let entries = table.bySession.removeValue(forKey: id) else { return [] }
            // Streams opened with the new token (another instance's replacement reaches this one late) stay.
            let kept = entries.filter { $0.stream != nil && $0.matched == current }
            if !kept.isEmpty { table.bySession[id] = kept }
            table.count -= entries.count - kept.count
            return entries.compactMap { $0.matched == current ? nil : $0.stream }
        }
        // Outside the lock: ending a stream takes its session's lock.
        for stream in streams { stream.revoke(id, message: message) }
        return streams.count
    }

    /// Streams registered and not swept yet (ended ones included until the next sweep).
    var count: Int { table.withLock { $0.count } }
}
