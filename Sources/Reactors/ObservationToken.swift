import Synchronization

/// Keeps an observation alive; `cancel()` (or dropping the token) stops further events.
///
/// Cancelling only flags the observer; the runtime forgets it at its next dispatch, so a token costs one
/// small object and holds no reference to the runtime.
public final class ObservationToken: Sendable {
    private let slot: ObserverSlot

    init(_ slot: ObserverSlot) { self.slot = slot }

    /// Stops the observation; the handler may still be running its current event, but gets no later one.
    public func cancel() { slot.isActive.store(false, ordering: .releasing) }

    deinit { cancel() }
}

/// The part of an observer its token can reach without knowing the state type.
@usableFromInline
class ObserverSlot: @unchecked Sendable {
    // Immutable apart from the atomic, hence the unchecked conformance (a subclassable class cannot be checked).
    @usableFromInline let isActive = Atomic<Bool>(true)

    @usableFromInline init() {}
}

/// One registered observer of a runtime whose state is `State`.
@usableFromInline
final class ObserverBox<State: Sendable>: ObserverSlot, @unchecked Sendable {
    @usableFromInline let handler: @Sendable (StateEvent<State>) -> Void

    @usableFromInline init(_ handler: @escaping @Sendable (StateEvent<State>) -> Void) {
        self.handler = handler
        super.init()
    }

    /// Delivers `event` unless the observation was cancelled; returns false when it was.
    @inlinable @discardableResult
    func deliver(_ event: StateEvent<State>) -> Bool {
        guard isActive.load(ordering: .acquiring) else { return false }
        handler(event)
        return true
    }
}

/// A runtime's observers, stored without an array for the common case of one (a session's publisher).
@usableFromInline
enum ObserverList<State: Sendable>: Sendable {
    case empty
    case one(ObserverBox<State>)
    case many(ContiguousArray<ObserverBox<State>>)

    @inlinable var isEmpty: Bool {
        if case .empty = self { true } else { false }
    }

    /// Adds `observer` after the existing ones.
    @usableFromInline mutating func append(_ observer: ObserverBox<State>) {
        switch self {
        case .empty: self = .one(observer)
        case .one(let first): self = .many([first, observer])
        case .many(var all):
            self = .empty
            all.append(observer)
            self = .many(all)
        }
    }

    /// Forgets the observers whose token was cancelled.
    @usableFromInline mutating func removeInactive() {
        let active: ContiguousArray<ObserverBox<State>>
        switch self {
        case .empty: return
        case .one(let only): active = only.isActive.load(ordering: .acquiring) ? [only] : []
        case .many(let all): active = all.filter { $0.isActive.load(ordering: .acquiring) }
        }
        switch active.count {
        case 0: self = .empty
        case 1: self = .one(active[0])
        default: self = .many(active)
        }
    }

    /// Delivers `event` to every observer in order; returns false if some had been cancelled.
    @inlinable func deliver(_ event: StateEvent<State>) -> Bool {
        switch self {
        case .empty:
            return true
        case .one(let only):
            return only.deliver(event)
        case .many(let all):
            var allActive = true
            for observer in all where !observer.deliver(event) { allActive = false }
            return allActive
        }
    }
}
