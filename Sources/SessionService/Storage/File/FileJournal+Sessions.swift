import Posix
import Tokens

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(Glibc)
    import Glibc
#endif

// Sessions in the journal: create, load (the passivation and restart path), delete, quarantine, tokens.
extension FileJournal {
    var count: Int { state.withLock { $0.index.entries.count } }

    func contains(_ id: String) -> Bool { state.withLock { $0.index.keys[id] != nil } }

    func readFailure(_ id: String) -> String? { readFailures.withLock { $0[id] } }

    func storedSessions() -> [StoredSessionInfo] {
        state.withLock { state in state.index.entries.values.map(\.info) }
    }

    /// The start-up scan's timer hints of the sessions it found (nil once they were handed out: the sessions
    /// keep the service's index up to date themselves from then on).
    func timerHints() -> [(id: String, at: Int64)] {
        state.withLock { state in
            state.index.entries.values.compactMap { entry in
                defer { entry.timerHint = nil }
                guard entry.unavailable == nil, let at = entry.timerHint else { return nil }
                return (entry.id, at)
            }
        }
    }

    func storedSession(_ id: String) -> StoredSessionInfo? {
        state.withLock { state in state.index.keys[id].flatMap { state.index.entries[$0] }?.info }
    }

    /// Journals a new session's first snapshot, with a fresh incarnation, and its token's hash (one lock,
    /// so one write); nil when the id is taken or the snapshot is larger than a record (logged).
    func create(_ snapshot: StoredSnapshot, accessTokenHash: SessionTokenHash?) -> (any SessionLog)? {
        var snapshot = snapshot
        snapshot.incarnation = UInt64.random(in: 1...UInt64.max)
        return state.withLock { state -> (any SessionLog)? in
            guard state.index.keys[snapshot.id] == nil else { return nil }
            let key = state.index.nextKey
            let identity = (snapshot.id, snapshot.reactor)
            guard
                append(
                    &state, kind: .snapshot, key: key, number: snapshot.version, identity: identity,
                    payload: { snapshot.encode(into: &$0) }) != nil
            else { return nil }
            guard let entry = state.index.entries[key] else { return nil }
            entry.incarnation = snapshot.incarnation
            if let accessTokenHash { appendAccessToken(&state, key: key, accessTokenHash) }
            entry.resident = true
            return FileSessionLog(
                journal: self, key: key, entry: entry, id: snapshot.id, reactor: snapshot.reactor,
                position: state.buffer.appended)
        }
    }

    /// Journals a snapshot of a resident session; its position, nil when it was refused (larger than a
    /// record): the session must stay in memory.
    func appendSnapshot(key: UInt32, _ snapshot: StoredSnapshot) -> UInt64? {
        state.withLock { state in
            guard let entry = state.index.entries[key] else { return nil }
            // Every snapshot carries the incarnation the session was created with.
            var snapshot = snapshot
            snapshot.incarnation = entry.incarnation
            guard
                append(
                    &state, kind: .snapshot, key: key, number: snapshot.version, identity: nil,
                    payload: { snapshot.encode(into: &$0) }) != nil
            else { return nil }
            return state.buffer.appended
        }
    }

    /// Marks a resident session as leaving memory: from now on the index keeps the records after its
    /// latest snapshot (there are none yet), since no live session tracks them.
    func markPassive(key: UInt32) {
        state.withLock { $0.index.entries[key]?.resident = false }
    }

    /// Journals the deletion and queues the session's records for erasure (``eraseDeletedSessions()``).
    @discardableResult
    func delete(_ id: String) -> Bool {
        let deleted = state.withLock { state -> Bool in
            guard let key = state.index.keys[id], let entry = state.index.entries[key] else { return false }
            let location = append(&state, kind: .delete, key: key, number: 0, identity: nil) { _ in }
            if let location {
                state.erasures[key] = Erasure(firstSegment: entry.firstSegment, deleteSegment: location.segment)
            }
            return true
        }
        if deleted { _ = readFailures.withLock { $0.removeValue(forKey: id) } }
        return deleted
    }

    func quarantine(_ id: String, reason: String) {
        state.withLock { state in
            guard let key = state.index.keys[id] else { return }
            Self.quarantine(&state, key: key, reason: reason)
        }
    }

    /// Quarantines a stored session: every request on it answers 409 with `reason`.
    static func quarantine(_ state: inout State, key: UInt32, reason: String) {
        state.index.entries[key]?.unavailable = reason
        state.index.entries[key]?.resident = false
    }

    func quarantine(key: UInt32, reason: String) {
        state.withLock { Self.quarantine(&$0, key: key, reason: reason) }
    }

    /// The key of a stored session.
    func key(for id: String) -> UInt32? { state.withLock { $0.index.keys[id] } }

    // MARK: Access tokens

    func accessTokenHash(of id: String) -> SessionTokenHash? {
        state.withLock { state in state.index.keys[id].flatMap { state.index.entries[$0] }?.accessToken?.hash }
    }

    func replaceAccessTokenHash(_ hash: SessionTokenHash, of id: String) -> Bool {
        state.withLock { state in
            guard let key = state.index.keys[id], state.index.entries[key] != nil else { return false }
            appendAccessToken(&state, key: key, hash)
            return true
        }
    }

    /// Appends an access-token record: the hash as its stored text (64 hexadecimal digits).
    @discardableResult
    func appendAccessToken(_ state: inout State, key: UInt32, _ hash: SessionTokenHash) -> RecordLocation? {
        let text = hash.storedText
        return append(&state, kind: .accessToken, key: key, number: 0, identity: nil, accessToken: hash) {
            $0.append(contentsOf: text.utf8)
        }
    }
}
