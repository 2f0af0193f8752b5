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
