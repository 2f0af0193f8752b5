import NATS
import Synchronization

/// Which instance claims each session, as the claims bucket's watcher delivers its entries.
final class ClaimMirror: Sendable {
    private let holders = Mutex<[String: String]>([:])

    /// Notes one claims-bucket entry (a claim put, or given up).
    func apply(_ message: StoredMessage) {
        guard let dot = message.subject.utf8.lastIndex(of: UInt8(ascii: ".")) else { return }
        let id = String(message.subject[message.subject.utf8.index(after: dot)...])
        let holder = message.headers["KV-Operation"] == nil ? OwnershipClaim(json: message.payload)?.instance : nil
        holders.withLock { $0[id] = holder }
    }

    /// Every instance that claims a session, in order.
    var instances: [String] { Array(Set(holders.withLock { $0.values })).sorted() }

    /// The instance that claims session `id` as far as the mirror has heard (it may lag); nil when none or unknown.
    func holder(of id: String) -> String? { holders.withLock { $0[id] ?? nil } }
}
