import HTTPServer
import JSONCodec
import Logs
import Reactors

// Sessions a crash quarantined: releasing one, its action log with the crashed actions, and how far back
// a fork or time travel may rebuild it.
extension ReactorService {
    /// `POST /admin/sessions/{id}/release` → 200 `{"id", "reactor", "version", "state"}` when the session
    /// loads now (its crash records are deleted), 409 `session_unavailable` when it still cannot be served.
    /// A new crash while it loads quarantines it again from the next start.
    func adminRelease(_ exchange: Exchange) {
        let id = exchange.id
        guard let storage = store.storage else {
            return exchange.fail(
                APIError(.memoryOnly, "nothing is quarantined in memory-only mode (storage.memoryOnly)"))
        }
        guard let info = storage.storedSession(id) else { return exchange.fail(store.absence(id)) }
        let records = crashes.records(of: id)
        if records.isEmpty, let reason = info.unavailable {
            // Damage is not a reactor's doing: nothing deployed can fix it, and loading what is left could serve
            // a history with holes.
            return exchange.fail(
                APIError(
                    .sessionUnavailable,
                    "session \(JSONWriter.quoted(id)) cannot be released: it is not quarantined by a crash "
                        + "but because \(reason); DELETE it to start over"
                ))
        }
        if !records.isEmpty {
            logger.notice(
                "releasing a quarantined session: loading it with the reactor deployed now",
                ["session": .string(id), "crashes": .int(records.count)])
            storage.liftQuarantine(id)
        }
        guard let session = store.session(id) else {
            // Quarantined again when it failed to load (its history does not decode); kept quarantined by its
            // crash when the storage could not be read now.
            if !records.isEmpty, storage.storedSession(id)?.unavailable == nil {
                storage.quarantine(id, reason: records.quarantineReason(id: id))
            }
            return exchange.fail(store.absence(id))
        }
        if !records.isEmpty {
            crashes.forget(id)
            logger.notice(
                "released a quarantined session: it loads again; its crash records are deleted",
                ["session": .string(id)])
        }
        session.touch(at: context.clock.monotonicNanoseconds())
        let snapshot = session.snapshot()
        exchange.dependsOn = session.storedPosition
        exchange.reply(200, json: Self.sessionJSON(session, snapshot))
    }

    /// `GET /admin/sessions/{id}/actions` of a session a crash quarantined: its stored action log (read
    /// without loading it), with the action each crash was running marked `"crashed": true` (added when
    /// it never reached the log). False when no crash quarantines it.
    func quarantinedActionLog(_ id: String, _ exchange: Exchange) -> Bool {
        guard let storage = store.storage else { return false }
        let records = crashes.records(of: id)
        guard !records.isEmpty, storage.storedSession(id)?.unavailable != nil else { return false }
        guard let since = exchange.integerQuery("since", default: 0, range: 0...UInt64.max),
            let limit = exchange.integerQuery("limit", default: 1000, range: 1...100_000)
        else { return true }
        let stored: [ActionLogEntry]
        do {
            guard let found = try storage.storedActionLog(of: id) else {
                exchange.fail(store.absence(id))
                return true
            }
            stored = found
        } catch {
            exchange.fail(.storageUnreadable(id: id, reason: error.reason))
            return true
        }
        let entries = Self.withCrashedActions(stored, records).filter { $0.entry.seq > since }
        let page = entries.prefix(Int(limit))
        var out = JSONWriter(capacity: 64 + page.count * 96)
        out.raw("{\"actions\":[")
        for (index, item) in page.enumerated() {
            if index > 0 { out.raw(",") }
            Self.write(item.entry, crashed: item.crashed, to: &out)
        }
        out.raw("]")
        if entries.count > page.count, let last = page.last {
            out.raw(",\"next\":")
            out.integer(last.entry.seq)
        }
        out.raw("}")
        exchange.dependsOn = 0
        exchange.reply(200, json: out.bytes)
        return true
    }

    /// The stored log with every crash's action marked: an entry of the same seq is marked, and an action
    /// the log never got (it crashed before it was journaled) is added from the record, after the rest.
    static func withCrashedActions(
        _ stored: [ActionLogEntry], _ records: [CrashRecord]
    ) -> [(entry: ActionLogEntry, crashed: Bool)] {
        var entries = stored.map { (entry: $0, crashed: false) }
        var lastSeq = stored.last?.seq ?? 0
        for record in records where record.call != .replay && record.call != .decodeState {
            if record.seq > 0, let index = entries.firstIndex(where: { $0.entry.seq == record.seq }) {
                entries[index].crashed = true
                continue
            }
            guard record.seq > 0 || record.action != nil else { continue }
            // Never accepted (it crashed while being decoded): listed after the log, under the seq it would have had.
            let seq = record.seq > 0 ? record.seq : lastSeq + 1
            lastSeq = max(lastSeq, seq)
            let action = record.action.flatMap { try? JSONParser(maxDepth: 512, maxBytes: 1 << 20).parse($0) }?
                .serialized()
            entries.append(
                (ActionLogEntry(seq: seq, at: record.at, action: action ?? Array("null".utf8), stubbed: false), true))
        }
        return entries.sorted { $0.entry.seq < $1.entry.seq }
    }

    /// One entry of the action log's JSON.
    static func write(_ entry: ActionLogEntry, crashed: Bool, refusal: ActionRejection? = nil, to out: inout JSONWriter)
    {
        out.raw("{\"seq\":")
        out.integer(entry.seq)
        out.raw(",\"at\":")
        out.string(JSONLineLogHandler.rfc3339(Double(entry.at) / 1e9))
        out.raw(",\"action\":")
        out.raw(entry.action)
        out.raw(",\"stubbed\":")
        out.bool(entry.stubbed)
        if entry.interrupted { out.raw(",\"interrupted\":true") }
        if crashed { out.raw(",\"crashed\":true") }
        if entry.origin == .effect { out.raw(",\"from\":\"effect\"") }
        if let timer = entry.timer {
            out.raw(",\"timer\":")
            out.string(timer)
        }
        if let refusal {
            out.raw(",\"error\":{\"code\":")
            out.string(refusal.code)
            out.raw(",\"message\":")
            out.string(refusal.message)
            out.raw("}")
        }
        out.raw("}")
    }

    /// Why version `version` of a quarantined session cannot be rebuilt (nil: it can): only a crash's
    /// quarantine lets its versions up to the last good one be read and forked.
    func quarantineRefusal(_ id: String, _ info: StoredSessionInfo, version: UInt64) -> APIError? {
        guard let reason = info.unavailable else { return nil }
        let records = crashes.records(of: id)
        guard !records.isEmpty else { return APIError(.unavailable(id: id, reason: reason)) }
        let lastGood = records.lastGoodVersion(stored: info.version)
        guard version > lastGood else { return nil }
        return APIError(
            .sessionUnavailable,
            "session \(JSONWriter.quoted(id)) is quarantined and version \(version) is past its last good version "
                + "\(lastGood): \(reason)"
        )
    }

    /// The `"crash"` member of a quarantined session in the admin listing: what crashed it last, and the
    /// newest version a fork may start from.
    func crashJSON(_ id: String, storedVersion: UInt64, into out: inout JSONWriter) {
        let records = crashes.records(of: id)
        guard let latest = records.last else { return }
        out.raw(",\"crash\":{\"phase\":")
        out.string(latest.phase)
        out.raw(",\"seq\":")
        out.integer(latest.seq)
        out.raw(",\"version\":")
        out.integer(latest.version)
        out.raw(",\"signal\":")
        out.string(latest.signal)
        out.raw(",\"at\":")
        out.string(latest.when)
        out.raw(",\"crashes\":")
        out.integer(records.count)
        out.raw(",\"lastGoodVersion\":")
        out.integer(records.lastGoodVersion(stored: storedVersion))
        out.raw("}")
    }
}
