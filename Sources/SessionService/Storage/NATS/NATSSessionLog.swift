import Dispatch
import NATS
import Synchronization

/// One session's records on its subject, written by the instance that claims the session: an
/// outbox with one publish in flight at a time. Each publish expects the subject's last sequence to
/// be the one its previous publish got (`Nats-Expected-Last-Subject-Sequence`), so once another
/// instance has written its fence, nothing more of this one lands; records appended while a publish
/// is in flight go out together in the next one (a batch per round trip).
///
/// Appends return at once with a position (``DurabilityWatermark``); the position is resolved when
/// JetStream acknowledges the publish that completes the record. A publish that times out or loses
/// its connection is sent again, unchanged: the expected sequence stores it at most once (see ``batchHeader``).
final class NATSSessionLog: SessionLog {
    /// The header naming a batch (``Batch/messageID``), so that a batch stored by an attempt whose acknowledgement
    /// was lost is recognised when its retry is refused. Not `Nats-Msg-Id` where the server holds the expected
    /// sequence across proposals in flight (2.9.21 on, or one server): that stores a batch at most once (a retry
    /// expects the sequence the first copy moved past, or is refused while the first is in flight), and a
    /// `Nats-Msg-Id` costs the server a duplicate-window entry per publish (5–10 µs of CPU, measured). Before
    /// 2.9.21 a clustered stream could store a retry racing its first attempt (nats-server#4320): there batches
    /// keep carrying `Nats-Msg-Id`, as they did before (``NATSMessageIDs/carriedByBatches``).
    static let batchHeader = "Reactor-Batch"

    unowned let storage: NATSStorage
    let id: String
    let reactor: String
    let subject: String
    let state: Mutex<Outbox>
    /// The position of this session's newest record.
    private let last = Atomic<UInt64>(0)
    /// Set once the log cannot be written any more (taken over, deleted); read on every action.
    let stopped = Atomic<Bool>(false)
    /// Open ``holdPublishes()`` calls: while any is, appends wait in the outbox for the last one to end.
    private let holds = Atomic<Int>(0)

    /// Records waiting to go out, and the one publish in flight.
    struct Outbox {
        /// The subject's sequence after this log's latest acknowledged publish.
        var lastSequence: UInt64
        /// Frames not yet cut into a batch, the positions of the records they complete, and whether
        /// clients may see any of them.
        var building = Batch()
        /// Batches cut and waiting, oldest first (a record larger than a message fills several).
        var queued: [Batch] = []
        var inFlight: Batch?
        /// Whether ``inFlight`` was handed to the connection (else it waits for the lease).
        var sent = false
        /// Why nothing more of this log goes out.
        var stop: String?
        /// The claim's revision: what giving it up or renewing it expects.
        var claimRevision: UInt64
        /// The highest version appended.
        var version: UInt64
        var releasing = false
        /// The subject was just made by this instance: a first publish refused there finds a deleted
        /// session's leftovers, purged before it is sent again.
        var fresh: Bool
        /// Messages on the subject since the latest trim (or since it began).
        var messages: Int
        /// The sequence of the message that began the latest snapshot, once acknowledged, and whether an
        /// action-log checkpoint completed after it (what came before it may then go).
        var snapshotSequence: UInt64?
        var trimPoint: UInt64?
        var checkpointing = false
        var drainWaiters: [@Sendable () -> Void] = []

        var isEmpty: Bool { inFlight == nil && queued.isEmpty && building.payload.isEmpty }
    }

    /// What one publish carries.
    struct Batch {
        var payload: [UInt8] = []
        var positions: [UInt64] = []
        var shown = false
        var startsSnapshot = false
        var endsCheckpoint = false
        var messageID = ""
        var expected: UInt64 = 0
        var sentAt: Int64 = 0
        var attempts = 0
    }

    init(
        storage: NATSStorage, id: String, reactor: String, lastSequence: UInt64, claimRevision: UInt64, version: UInt64,
        messages: Int, fresh: Bool
    ) {
        self.storage = storage
        self.id = id
        self.reactor = reactor
        subject = storage.names.records(id)
        state = Mutex(
            Outbox(
                lastSequence: lastSequence, claimRevision: claimRevision, version: version, fresh: fresh,
                messages: messages))
    }

    // MARK: SessionLog

    var unavailableReason: String? {
        if stopped.load(ordering: .acquiring), let reason = state.withLock({ $0.stop }) { return reason }
        return storage.unavailableReason
    }

    /// An accept record holds an action with its bookkeeping in one record, and records span messages.
    var maxActionBytes: Int { FileJournal.maxActionBytes }

    /// As in the file journal: a snapshot's bookkeeping needs room besides the state.
    var largestSnapshotState: Int {
        JournalRecord.maxBodyBytes - JournalRecord.headerBytes - (1 << 20) - id.utf8.count - reactor.utf8.count
    }

    var lastPosition: UInt64 { last.load(ordering: .acquiring) }

    func appendAccept(
        seq: UInt64, at: Int64, stubbed: Bool, completed: Bool, origin: ActionOrigin, action: [UInt8], timer: String?
    ) {
        var payload: [UInt8] = []
        payload.reserveCapacity(StoredAccept.headerBytes + action.count)
        let accept = StoredAccept(
            at: at, stubbed: stubbed, completed: completed, origin: origin, body: action, timer: timer)
        accept.encode(into: &payload)
        append(.accept, number: seq, payload)
    }

    /// A sooner timer than the session's bucket entry names is part of what the change's output acknowledges:
    /// it gets a position of its own, resolved once the entry says so.
    func noteSoonestTimer(_ at: Int64?) {
        guard storage.timerIsSooner(id, at: at) else { return storage.noteTimer(id, at: at) }
        // Given and noted under the outbox's lock, as records are: an acknowledgement of a later record finds
        // the write waiting, so output showing that record waits for it too (``acknowledged(_:sequence:)``).
        state.withLock { _ in
            let position = storage.watermark.allocate()
            last.max(position, ordering: .acquiringAndReleasing)
            storage.noteTimer(id, at: at, position: position)
        }
    }

    /// The new owner writes its soonest timer into the session's entry (``NATSStorage/noteLoadedTimers(_:at:)``).
    func noteLoadedTimers(_ at: Int64?) {
        storage.noteLoadedTimers(id, at: at)
    }

    func appendTimer(_ change: TimerChange, serial: UInt64) -> Bool {
        var payload: [UInt8] = []
        change.encode(into: &payload)
        guard payload.count <= JournalRecord.maxBodyBytes - JournalRecord.headerBytes else { return false }
        append(.timer, number: serial, payload)
        return true
    }

    func appendCompletion(seq: UInt64) {
        append(.complete, number: seq, [])
    }

    func appendMutation(_ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool {
        appendState(.mutation, json, version: version, storageVersion: storageVersion)
    }

    func appendForcedState(_ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool {
        appendState(.forced, json, version: version, storageVersion: storageVersion)
    }

    /// Appends a state record; false when it is larger than a record. Version 1 sends the JSON as it is
    /// (no copy); a later version's marker goes first, in a copy.
    private func appendState(_ kind: RecordKind, _ json: [UInt8], version: UInt64, storageVersion: Int) -> Bool {
        guard json.count <= JournalRecord.maxBodyBytes - JournalRecord.headerBytes - StoredState.versionBytes else {
            return false
        }
        guard storageVersion != 1 else {
            append(kind, number: version, json)
            return true
        }
        var payload: [UInt8] = []
        payload.reserveCapacity(StoredState.versionBytes + json.count)
        StoredState.appendPayload(json, storageVersion: storageVersion, into: &payload)
        append(kind, number: version, payload)
        return true
    }

    func appendSnapshot(_ snapshot: StoredSnapshot) -> Bool {
        var payload: [UInt8] = []
        snapshot.encode(into: &payload)
        guard payload.count <= JournalRecord.maxBodyBytes - JournalRecord.headerBytes else { return false }
        append(.snapshot, number: snapshot.version, payload)
        return true
    }

    func appendActionLogCheckpoint(_ entries: ((ActionLogEntry) -> Void) -> Void) {
        var chunks = ActionLogCheckpoint()
        let emit = { (kind: RecordKind, chunk: [ActionLogEntry]) in
            var payload: [UInt8] = []
            StoredActionLog.encode(chunk, into: &payload)
            self.append(kind, number: chunk[chunk.count - 1].seq, payload)
        }
        entries { chunks.add($0, emit: emit) }
        // Also after an empty log: the end marks the checkpoint complete, so what came before may go.
        append(.actionLogEnd, number: chunks.finish(emit: emit) ?? 0, [])
    }

    /// Its claim stops saying it is loading (see ``OwnershipClaim/loading``).
    func didLoad() {
        storage.markLoaded(self)
    }

    func release() {
        let empty = state.withLock { outbox -> Bool in
            outbox.releasing = true
            return outbox.isEmpty
        }
        if empty { storage.released(self) }
    }

    // MARK: Appending

    /// Gives the record a position, adds it to the outbox, and publishes if nothing is in flight.
    func append(_ kind: RecordKind, number: UInt64, _ payload: [UInt8]) {
        let limit = storage.maxMessageBytes.load(ordering: .relaxed)
        let (position, next, refused) = state.withLock { outbox -> (UInt64, Batch?, Bool) in
            let position = storage.watermark.allocate()
            last.store(position, ordering: .releasing)
            if outbox.stop != nil { return (position, nil, true) }
            if kind == .mutation || kind == .forced { outbox.version = max(outbox.version, number) }
            var rest = payload[...]
            var first = true
            repeat {
                // A record that does not fit whole after what the batch holds starts a batch of its own;
                // one larger than a message goes on in the next ones.
                if !outbox.building.payload.isEmpty,
                    outbox.building.payload.count + RecordFrame.headerBytes + rest.count > limit
                {
                    outbox.queued.append(outbox.building)
                    outbox.building = Batch()
                }
                let piece = rest.prefix(limit - RecordFrame.headerBytes - outbox.building.payload.count)
                rest = rest.dropFirst(piece.count)
                RecordFrame.append(
                    kind: kind, number: number, continues: !rest.isEmpty, body: piece, to: &outbox.building.payload)
                if first, kind == .snapshot { outbox.building.startsSnapshot = true }
                first = false
                if !rest.isEmpty {
                    outbox.queued.append(outbox.building)
                    outbox.building = Batch()
                }
            } while !rest.isEmpty
            outbox.building.positions.append(position)
            if kind.isShown { outbox.building.shown = true }
            if kind == .actionLogEnd { outbox.building.endsCheckpoint = true }
            return (position, takeNext(&outbox), false)
        }
        if refused {
            // The log stopped (taken over, deleted) as this record came: it can never be stored.
            storage.lost(
                [position], shown: kind.isShown, id: id, reason: unavailableReason ?? "the session's log is closed")
            return
        }
        if let next { publish(next) }
    }

    /// Holds what is appended until ``releasePublishes()``: an action's mutation (reduced inline as it is
    /// submitted) and its accept then share one publish, so its answer waits for one round trip, not two.
    func holdPublishes() {
        holds.wrappingAdd(1, ordering: .acquiringAndReleasing)
    }

    /// Publishes what was held, unless a publish is in flight (its acknowledgement sends it then).
    func releasePublishes() {
        guard holds.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        // An append that saw the hold left its record in the outbox; one after the release published itself.
        let next = state.withLock { outbox in takeNext(&outbox) }
        if let next { publish(next) }
    }

    /// The next batch to publish when none is in flight (it becomes the one in flight), else nil.
    private func takeNext(_ outbox: inout Outbox) -> Batch? {
        guard outbox.inFlight == nil, outbox.stop == nil, holds.load(ordering: .acquiring) == 0 else { return nil }
        var batch: Batch
        if !outbox.queued.isEmpty {
            batch = outbox.queued.removeFirst()
        } else if !outbox.building.payload.isEmpty {
            batch = outbox.building
            outbox.building = Batch()
        } else {
            return nil
        }
        batch.messageID = storage.nextMessageID()
        batch.expected = outbox.lastSequence
        outbox.inFlight = batch
        outbox.sent = false
        return batch
    }

    /// Sends the batch in flight, unless the lease lapsed: then it waits for ``resume()``.
    func publish(_ batch: Batch) {
        guard storage.lease.isValid else { return }
        let attempt = state.withLock { outbox -> Int? in
            guard outbox.inFlight?.messageID == batch.messageID, !outbox.sent else { return nil }
            outbox.sent = true
            outbox.inFlight?.sentAt = OwnershipLease.now()
            outbox.inFlight?.attempts += 1
            return outbox.inFlight?.attempts
        }
        guard let attempt else { return }
        let byMessageID = storage.messageIDs.carriedByBatches.load(ordering: .relaxed)
        let options = PublishOptions(
            messageID: byMessageID ? batch.messageID : nil, expectedLastSubjectSequence: batch.expected)
        let headers: NATSHeaders? = byMessageID ? nil : [Self.batchHeader: batch.messageID]
        do throws(NATSError) {
            try storage.jetStream.publish(subject, payload: batch.payload, headers: headers, options: options) {
                [self] result in
                switch result {
                case .success(let ack): acknowledged(batch.messageID, sequence: ack.sequence)
                case .failure(let error): failed(batch.messageID, error, attempt: attempt)
                }
            }
        } catch {
            failed(batch.messageID, error, attempt: attempt)
        }
    }

    /// Sends the batch in flight if it waited for the lease (called once the lease is back).
    func resume() {
        let batch = state.withLock { outbox -> Batch? in outbox.sent ? nil : outbox.inFlight }
        if let batch { publish(batch) }
    }

    // MARK: Acknowledgements

    /// JetStream stored the batch in flight as `sequence`: its records are durable.
    func acknowledged(_ messageID: String, sequence: UInt64) {
        let now = OwnershipLease.now()
        let outcome = state.withLock {
            outbox -> (done: Batch, next: Batch?, drained: [@Sendable () -> Void], released: Bool, trim: UInt64?)? in
            guard let done = outbox.inFlight, done.messageID == messageID else { return nil }
            outbox.inFlight = nil
            outbox.lastSequence = sequence
            outbox.fresh = false
            outbox.messages += 1
            if done.startsSnapshot { outbox.snapshotSequence = sequence }
            var trim: UInt64?
            if done.endsCheckpoint, let start = outbox.snapshotSequence, outbox.checkpointing {
                outbox.checkpointing = false
                outbox.trimPoint = start
                trim = start
            }
            let next = takeNext(&outbox)
            guard outbox.isEmpty else { return (done, next, [], false, trim) }
            let waiters = outbox.drainWaiters
            outbox.drainWaiters = []
            return (done, next, waiters, outbox.releasing, trim)
        }
        guard let outcome else { return }
        storage.metrics.publishLatency.observe(nanoseconds: UInt64(max(0, now - outcome.done.sentAt)))
        storage.metrics.publishedRecords.increment(by: outcome.done.positions.count)
        // Every earlier record of this session was acknowledged before this batch went out; a timer write still
        // waiting (or running) may hold a position before these, and then only the watermark says they may show.
        storage.watermark.resolve(outcome.done.positions, exactly: !storage.timerWritesPending(id))
        if let next = outcome.next { publish(next) }
        if let trim = outcome.trim { storage.trim(self, before: trim) }
        for waiter in outcome.drained { waiter() }
        if outcome.released { storage.released(self) }
    }

    /// The batch in flight was not stored (or its acknowledgement was lost).
    func failed(_ messageID: String, _ error: NATSError, attempt: Int) {
        guard error.jetStreamErrorCode == JetStreamAPIError.wrongLastSequence else {
            return retry(messageID, after: error, attempt: attempt)
        }
        // Refused: either an earlier attempt of this very batch was stored (its acknowledgement lost),
        // or someone else wrote on the subject. The subject's last message tells which.
        do throws(NATSError) {
            try storage.jetStream.getMessage(stream: storage.names.recordsStream, .lastBySubject(subject)) {
                [self] result in
                switch result {
                case .success(let message?)
                where message.headers[Self.batchHeader] == messageID || message.headers["Nats-Msg-Id"] == messageID:
                    acknowledged(messageID, sequence: message.sequence)
                case .success(let message):
                    let fresh = state.withLock { $0.fresh && $0.inFlight?.messageID == messageID }
                    if fresh, let message {
                        storage.purgeLeftovers(self, messageID: messageID, through: message.sequence)
                    } else if let message, NATSSessionLoader.fencer(of: message) != nil {
                        // Perhaps the fence of a load that lost to this instance's (nats-server#4320): reads
                        // that wait, so off the connection's thread.
                        DispatchQueue.global().async { [self] in
                            refusedAfterFence(messageID, last: message, attempt: attempt)
                        }
                    } else {
                        storage.metrics.fencingRejections.increment()
                        stop(because: NATSSessionLoader.takenOverReason(message), fenced: true)
                    }
                case .failure(let error):
                    retry(messageID, after: error, attempt: attempt)
                }
            }
        } catch {
            retry(messageID, after: error, attempt: attempt)
        }
    }

    /// The batch in flight was refused and the subject's last message is a fence: when only fences of loads that
    /// lost to this instance's came after its last publish, it goes again after them (with the claim's revision as
    /// the loser put it back); otherwise another instance took the session over, and the log stops.
    private func refusedAfterFence(_ messageID: String, last message: StoredMessage, attempt: Int) {
        let after = state.withLock { $0.lastSequence }
        guard let claimRevision = storage.loader.fencedOnlyByLosers(id, after: after) else {
            storage.metrics.fencingRejections.increment()
            return stop(because: NATSSessionLoader.takenOverReason(message), fenced: true)
        }
        let again = state.withLock { outbox -> Bool in
            guard outbox.inFlight?.messageID == messageID, outbox.stop == nil, outbox.lastSequence == after else {
                return false
            }
            outbox.lastSequence = message.sequence
            outbox.inFlight?.expected = message.sequence
            // The loser put the claim back: what renewing it and giving it up expect now.
            outbox.claimRevision = claimRevision
            outbox.sent = false
            return true
        }
        guard again else { return }
        storage.logger.notice(
            "a load that lost to this instance's left its fence on the session's records; writing on after it",
            ["session": .string(id), "fence": .int(Int(message.sequence)), "attempt": .int(attempt)])
        resume()
    }

    /// Sends the batch in flight again after a pause that grows with each attempt (50 ms to 2 s).
    func retry(_ messageID: String, after error: NATSError, attempt: Int) {
        let again = state.withLock { outbox -> Bool in
            guard outbox.inFlight?.messageID == messageID, outbox.stop == nil else { return false }
            outbox.sent = false
            return true
        }
        guard again else { return }
        storage.metrics.retries.increment()
        if attempt == 1 || attempt % 20 == 0 {
            storage.logger.warning(
                "a publish of session records failed; sending it again",
                ["session": .string(id), "attempt": .int(attempt), "error": .string(error.description)])
        }
        let delay = min(Duration.milliseconds(50) * (1 << min(attempt - 1, 5)), Duration.seconds(2))
        storage.queue.asyncAfter(deadline: .now() + delay.timeInterval) { [self] in resume() }
    }

    /// Stops the log: nothing more goes out. Records not stored are lost: when clients may have been
    /// shown one, the process stops (``NATSStorage/lost(_:shown:id:reason:)``).
    func stop(because reason: String, fenced: Bool) {
        let (positions, shown, waiters) = state.withLock { outbox -> ([UInt64], Bool, [@Sendable () -> Void]) in
            guard outbox.stop == nil else { return ([], false, []) }
            outbox.stop = reason
            var batches = outbox.queued + [outbox.building]
            if let inFlight = outbox.inFlight { batches.insert(inFlight, at: 0) }
            outbox.inFlight = nil
            outbox.queued = []
            outbox.building = Batch()
            let waiters = outbox.drainWaiters
            outbox.drainWaiters = []
            return (batches.flatMap(\.positions), batches.contains { $0.shown }, waiters)
        }
        stopped.store(true, ordering: .releasing)
        if !positions.isEmpty { storage.lost(positions, shown: shown, id: id, reason: reason) }
        for waiter in waiters { waiter() }
        if fenced { storage.movedAway(self, reason: reason) }
    }

    /// Calls `body` once nothing of this log is waiting or in flight (at once if so).
    func whenDrained(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { outbox -> Bool in
            if outbox.isEmpty || outbox.stop != nil { return true }
            outbox.drainWaiters.append(body)
            return false
        }
        if now { body() }
    }

    /// Gives the claim up (the session leaves this instance), unless it was taken over.
    func giveUpClaim() {
        let (revision, stopped) = state.withLock { ($0.claimRevision, $0.stop != nil) }
        guard !stopped else { return }
        storage.claims.release(id, revision: revision)
    }
}
