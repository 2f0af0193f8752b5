import JSONCodec

/// One subscription to a session and how far it has got: made by a transport, handed with its sink to
/// ``SessionStreamSource/subscribe(_:sink:)``, and from then on touched only under that session's lock.
///
/// ```swift
/// let subscriber = Subscriber(lastEventID: 12, select: nil, selectText: nil)
/// if session.subscribe(subscriber, sink: sink) == .subscribed { … }
/// // later: session.handle(.drained, for: subscriber)
/// ```
public final class Subscriber: @unchecked Sendable {
    /// Where its events go; set by the session as it adds it, cleared once it has left. Unchecked:
    /// read under the session's lock, and a public property's checked read costs ~80 instructions per
    /// delivery.
    @exclusivity(unchecked) public var sink: (any SubscriberSink)?
    let select: JSONPointer?
    let selectText: String?
    /// It asked for RFC 6902 patches after its first state (`?delta=json-patch`).
    let patches: Bool
    /// The version whose state (or selected value) it holds from this stream's own events, the one a patch to
    /// the next version starts from (only to the next: after a skipped version its state comes whole); nil
    /// before its first state.
    var patchBase: UInt64?
    /// The version of the last state it was sent (or, resuming, the `Last-Event-ID` it came with).
    var lastSentVersion: UInt64?
    var lastSelected: JSONValue?
    /// Its transport refused an event: states are skipped until it drains, then it gets the latest.
    var behind = false
    var pendingPulses: [SessionEvent] = []
    var drops = 0
    var closed = false
    /// Where it is in its SubscriberList's `all`.
    var index = 0
    /// What it counts against its client address's `sse.maxSubscribersPerAddress` (nil: not counted),
    /// given back once it has left its session or was never taken in.
    let hold: AddressQuota.Hold?

    /// A subscriber that has seen up to version `lastEventID` (nil: nothing yet) and follows the whole state,
    /// or with `select` (`selectText` as the client wrote it) the value at that pointer; with `patches`, every
    /// state after its first that follows the one before comes as a patch.
    public convenience init(lastEventID: UInt64?, select: JSONPointer?, selectText: String?, patches: Bool = false) {
        self.init(lastEventID: lastEventID, select: select, selectText: selectText, patches: patches, hold: nil)
    }

    /// A subscriber counted against its client address by `hold`.
    init(
        lastEventID: UInt64?, select: JSONPointer?, selectText: String?, patches: Bool = false,
        hold: AddressQuota.Hold?
    ) {
        lastSentVersion = lastEventID
        self.select = select
        self.selectText = selectText
        self.patches = patches
        self.hold = hold
    }

    /// Whether `pulse` belongs to what this subscriber follows: the whole state, or a `select` pointer on the
    /// pulse's branch (pulse `editor.alert`, state member `/editor/alert`: the pointer `/editor` encloses it,
    /// `/editor/alert/text` lies inside it). A subscriber that selected another part gets none of it.
    func follows(_ pulse: SessionEvent) -> Bool {
        guard let tokens = select?.tokens, !tokens.isEmpty else { return true }
        guard case .pulse(let name, _) = pulse.kind else { return false }
        return Self.pulse(name, sharesBranchWith: tokens)
    }

    /// Whether the dotted pulse path `name` and the pointer `tokens` are one a prefix of the other, compared
    /// component by component without splitting `name`.
    static func pulse(_ name: String, sharesBranchWith tokens: [String]) -> Bool {
        var rest = name.utf8[...]
        for token in tokens {
            // The pointer goes on inside the pulse's value.
            if rest.isEmpty { return true }
            let end = rest.firstIndex(of: UInt8(ascii: ".")) ?? rest.endIndex
            guard rest[..<end].elementsEqual(token.utf8) else { return false }
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
        }
        // The pointer is the pulse or encloses it.
        return true
    }
}
