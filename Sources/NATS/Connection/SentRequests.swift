import Synchronization

/// How many requests a connection sent, by what they asked for: the round trips its users cost.
/// Counted when queued, one relaxed increment each.
///
/// ```swift
/// let counters = connection.sentRequests
/// print(counters.publishes, counters.keyValueWrites, counters.apiCalls)
/// ```
public final class SentRequests: Sendable {
    private let published = Atomic<Int>(0)
    private let keyValue = Atomic<Int>(0)
    private let api = Atomic<Int>(0)

    /// Requests to any other subject: publishes into streams awaiting their acknowledgement.
    public var publishes: Int { published.load(ordering: .relaxed) }
    /// Requests to `$KV.…`: key-value writes (puts, creates, updates, deletes) awaiting theirs.
    public var keyValueWrites: Int { keyValue.load(ordering: .relaxed) }
    /// Requests to `$JS.API.…`: reads, purges, consumers, stream management.
    public var apiCalls: Int { api.load(ordering: .relaxed) }

    /// Counts one request to `subject`.
    func count(_ subject: String) {
        var bytes = subject.utf8.makeIterator()
        if bytes.next() != UInt8(ascii: "$") {
            published.wrappingAdd(1, ordering: .relaxed)
        } else if bytes.next() == UInt8(ascii: "K") {
            keyValue.wrappingAdd(1, ordering: .relaxed)
        } else {
            api.wrappingAdd(1, ordering: .relaxed)
        }
    }
}
