import JSONCodec
import Reactors
import Synchronization

/// Journals every reduced mutation and forced state before any observer sees the state.
struct JournalMiddleware<R: Reactor>: ReactorMiddleware {
    let journal: SessionJournal
    /// Pins the encoding of the reactor's mutations and states on the session.
    let tracer: SessionCallTracer
    let encodings = MutationEncodings.shared(for: R.Mutation.self)

    /// It never refuses an action: `send` need not call it.
    var interceptsActions: Bool { false }

    func didReduce(mutation: R.Mutation, state: R.State, version: UInt64) {
        do {
            // Only an encoding the cache does not hold runs the reactor's code: pinned on the session.
            let json = try encodings.encode(mutation) {
                try tracer.run(.encodeMutation, version: version) { try JSONValueEncoder().encode(mutation) }
            }
            if journal.journal(mutation: json, version: version) { return }
            // A mutation too large for a record: the state it produced replays the same version.
            let whole = try tracer.run(.encodeState, version: version) { try JSONValueEncoder().encode(state) }
            if journal.journal(forced: whole, version: version) { return }
            journal.cannotJournal(version: version, "its mutation and its state are each")
        } catch {
            // Without the mutation the version cannot be replayed: a snapshot must cover it instead.
            journal.requireSnapshot()
            journal.logger.error(
                "a mutation does not encode as JSON; a snapshot will cover it",
                ["session": .string(journal.id), "version": .int(Int(version)), "error": .string("\(error)")])
        }
    }

    func didForce(state: R.State, version: UInt64) {
        do {
            let json = try tracer.run(.encodeState, version: version) { try JSONValueEncoder().encode(state) }
            if journal.journal(forced: json, version: version) { return }
            journal.cannotJournal(version: version, "the forced state")
        } catch {
            journal.requireSnapshot()
            journal.logger.error(
                "a forced state does not encode as JSON",
                ["session": .string(journal.id), "error": .string("\(error)")])
        }
    }
}

/// The JSON of recent mutations of a plain-bits type (a payload-less enum, a small trivial struct), by
/// their bits: equal bits are the same value, so the same JSON. Encoding through `Codable` is the
/// largest cost of journaling a mutation; most reactors' mutations repeat a handful of cases.
/// One cache per mutation type, shared by every session of it.
final class MutationEncodings: Sendable {
    static let capacity = 64
    private static let byType = Mutex<[ObjectIdentifier: MutationEncodings]>([:])
    /// A short list searched in order: a handful of cases, where hashing cost more than the scan.
    private let cache = Mutex<[(bits: UInt64, json: [UInt8])]>([])

    /// The cache of mutation type `type`.
    static func shared(for type: Any.Type) -> MutationEncodings {
        byType.withLock { caches in
            if let cache = caches[ObjectIdentifier(type)] { return cache }
            let cache = MutationEncodings()
            caches[ObjectIdentifier(type)] = cache
            return cache
        }
    }

    /// The JSON of `mutation`: from the cache, or made by `encode` (and kept when the type is plain bits).
    func encode<M: Encodable>(_ mutation: M, by encode: () throws -> [UInt8]) throws -> [UInt8] {
        guard _isPOD(M.self), MemoryLayout<M>.size <= 8 else { return try encode() }
        var key: UInt64 = 0
        withUnsafeBytes(of: mutation) { bits in
            withUnsafeMutableBytes(of: &key) { $0.copyMemory(from: bits) }
        }
        // The size is part of the key, so a 1-byte value never collides with a wider one.
        key = key ^ (UInt64(MemoryLayout<M>.size) << 60)
        if let known = cache.withLock({ cache in cache.first(where: { $0.bits == key })?.json }) { return known }
        let json = try encode()
        cache.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll(keepingCapacity: true) }
            cache.append((key, json))
        }
        return json
    }
}
