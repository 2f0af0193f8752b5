/// Holds output back until what it shows is durable: the server asks it, before writing, whether the
/// position an answer or an event depends on is durable, and parks output that is not (the loop goes
/// on with other connections) until the barrier wakes it. Positions grow with every record a store
/// appends; output depends, unless its producer says otherwise
/// (``HTTPResponseWriter/respond(_:dependingOn:)``), on everything appended when it is queued.
///
/// ```swift
/// final class Journal: OutputBarrier {
///     let appended = Atomic<UInt64>(0), written = Atomic<UInt64>(0)
///     var position: UInt64 { appended.load(ordering: .acquiring) }
///     func isDurable(_ position: UInt64) -> Bool { written.load(ordering: .acquiring) >= position }
///     func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) { waiters.append((position, wake)) }
/// }
/// configuration.outputBarrier = journal
/// ```
public protocol OutputBarrier: AnyObject, Sendable {
    /// The position output queued now depends on: everything appended so far.
    var position: UInt64 { get }
    /// Whether everything up to `position` is durable. Called on an event loop right before it
    /// writes: it may do quick local work to make it so (a `write(2)` to a file), never wait on a
    /// network.
    func isDurable(_ position: UInt64) -> Bool
    /// Calls `wake`, on any thread, once `position` is durable (at once if it already is), and may
    /// call it earlier when storing fails (the connection then asks ``failure(_:)``).
    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void)
    /// Why `position` cannot be made durable now, nil while it is durable or on its way: an answer
    /// queued as refusable (``HTTPResponseWriter/respond(_:dependingOn:refusedUnlessStored:)``)
    /// then leaves as a 503 ``HTTPRejection/Kind/notStored`` instead. Asked after `isDurable` said no.
    func failure(_ position: UInt64) -> String?
}

extension OutputBarrier {
    /// A barrier that never gives up on a position: held output waits for it or for the write timeout.
    public func failure(_ position: UInt64) -> String? { nil }
}

/// The output a connection holds back for its barrier: marks on its output queue, each saying that
/// the bytes up to it wait for a position. Counts are of bytes ever queued, so marks stay put while
/// earlier bytes are written; positions and ends both grow along the queue (a later answer waits for
/// at least what an earlier one waits for: answers leave in order). A mark is `refusable` when a 503
/// may replace its bytes should their records fail to be stored.
struct DurabilityHolds {
    /// Bytes ever queued, and how many of them may be written.
    private(set) var queued = 0
    private(set) var released = 0
    /// The first mark past `released`, kept outside `more` so the usual single answer needs no array.
    private var first: Mark?
    private var more: [Mark] = []
    /// The highest position this connection saw durable: output that depends on no more goes at once.
    private(set) var durable: UInt64 = 0
    /// The position a wake-up is asked for, so one is asked at a time.
    var awaited: UInt64?

    typealias Mark = (end: Int, position: UInt64, refusable: Bool)

    /// Queued bytes that wait for their positions.
    var held: Int { queued - released }

    /// The position the first held bytes wait for; nil when nothing is held.
    var firstPosition: UInt64? { first?.position }

    /// Whether the first held bytes are an answer a refusal may replace.
    var firstIsRefusable: Bool { first?.refusable ?? false }

    /// Notes `count` bytes queued that show what `position` holds.
    mutating func add(_ count: Int, position: UInt64, refusable: Bool = false) {
        guard count > 0 else { return }
        queued += count
        guard var last = more.last ?? first else {
            if position <= durable {
                released = queued
            } else {
                first = (queued, position, refusable)
            }
            return
        }
        // In order: bytes after held ones wait at least as long (and go, or are refused, with them).
        if position <= last.position {
            last.end = queued
            if more.isEmpty { first = last } else { more[more.count - 1] = last }
        } else {
            more.append((queued, position, refusable))
        }
    }

    /// Releases the bytes whose positions `isDurable` reports durable, front first.
    mutating func release(_ isDurable: (UInt64) -> Bool) {
        while let mark = first {
            guard mark.position <= durable || isDurable(mark.position) else { return }
            durable = max(durable, mark.position)
            released = mark.end
            first = more.isEmpty ? nil : more.removeFirst()
        }
    }

    /// Whether `position` is durable, asking `isDurable` only when it is past what was seen durable.
    mutating func isDurable(_ position: UInt64, _ isDurable: (UInt64) -> Bool) -> Bool {
        if position <= durable { return true }
        guard isDurable(position) else { return false }
        durable = position
        return true
    }

    /// Forgets every hold: the queued output was dropped.
    mutating func removeAll() {
        released = queued
        first = nil
        more.removeAll()
        awaited = nil
    }
}
