/// The output a connection holds back for its barrier: marks on its output queue, each saying that
/// the bytes up to it wait for a position. Counts are of bytes ever queued, so marks stay put while
/// earlier bytes are written. A mark is `refusable` when a 503 may replace its bytes should their
/// records fail to be stored, and `exact` when its bytes show what one position's records hold (a
/// session's own), as opposed to everything appended when they were queued.
///
/// Answers leave in order: bytes queued after held ones wait at least as long. With a barrier that
/// never loses a position, a later position being durable says every earlier one is, so later bytes
/// that wait for less join the last mark. With one that may (``OutputBarrier/losesPositions``), an
/// exact mark keeps its own position: it must be refused if that one is lost, however far the
/// watermark got; and it goes once its own session's records are durable
/// (``OutputBarrier/isDurableExactly(_:)``), without waiting for other sessions' records before it, so
/// output that depends on everything appended never joins it.
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
    /// Whether the barrier may report positions lost (set once, from the barrier).
    var losable = false

    typealias Mark = (end: Int, position: UInt64, refusable: Bool, exact: Bool)

    /// Queued bytes that wait for their positions.
    var held: Int { queued - released }

    /// The position the first held bytes wait for; nil when nothing is held.
    var firstPosition: UInt64? { first?.position }

    /// Whether the first held bytes show exactly their position's records (their session's), with a barrier that
    /// may lose positions: they wait for ``OutputBarrier/isDurableExactly(_:)``.
    var firstIsExact: Bool { losable && first?.exact == true }

    /// Whether the first held bytes are an answer a refusal may replace.
    var firstIsRefusable: Bool { first?.refusable ?? false }

    /// Whether the first held bytes show exactly their position's records, which `isLost` says can
    /// never be stored: they must never be written.
    func firstIsLost(_ isLost: (UInt64) -> Bool) -> Bool {
        guard losable, let first, first.exact else { return false }
        return isLost(first.position)
    }

    /// Notes `count` bytes queued that show what `position` holds (`exact`), or everything appended
    /// up to it.
    mutating func add(
        _ count: Int, position: UInt64, exact: Bool = false, refusable: Bool = false,
        isLost: (UInt64) -> Bool = { _ in false }
    ) {
        guard count > 0 else { return }
        queued += count
        guard var last = more.last ?? first else {
            if position <= durable && !(losable && exact && isLost(position)) {
                released = queued
            } else {
                first = (queued, position, refusable, exact)
            }
            return
        }
        // In order: bytes after held ones wait at least as long (and go, or are refused, with them).
        let joins =
            losable
            ? (exact ? last.exact && position == last.position : !last.exact && position <= last.position)
            : position <= last.position
        if joins {
            last.end = queued
            if more.isEmpty { first = last } else { more[more.count - 1] = last }
        } else {
            more.append((queued, position, refusable, exact))
        }
    }

    /// Releases the bytes whose positions `isDurable` reports durable (exact ones: `isDurableExactly`), front
    /// first; bytes showing a position `isLost` reports lost stay, for the connection to refuse.
    mutating func release(
        _ isDurable: (UInt64) -> Bool, isLost: (UInt64) -> Bool = { _ in false },
        isDurableExactly: (UInt64) -> Bool = { _ in false }
    ) {
        while let mark = first {
            if mark.position <= durable || isDurable(mark.position) {
                if losable && mark.exact && isLost(mark.position) { return }
                durable = max(durable, mark.position)
            } else {
                // Its session's records are durable, not necessarily everything before it: `durable` stays.
                guard losable, mark.exact, isDurableExactly(mark.position), !isLost(mark.position) else { return }
            }
            released = mark.end
            first = more.isEmpty ? nil : more.removeFirst()
        }
    }

    /// Whether `position` is durable (and, for `exact` output, not lost), asking `isDurable` only when
    /// it is past what was seen durable.
    mutating func isDurable(
        _ position: UInt64, exact: Bool = false, _ isDurable: (UInt64) -> Bool,
        isLost: (UInt64) -> Bool = { _ in false }, isDurableExactly: (UInt64) -> Bool = { _ in false }
    ) -> Bool {
        if losable && exact && isLost(position) { return false }
        if position <= durable { return true }
        guard isDurable(position) else { return losable && exact && isDurableExactly(position) }
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
