import Synchronization

/// A value many reactors share (ReactorKit's "Global States"): read or set `value`, and merge `values`
/// into a reactor's `transform(mutation:)` to hear every change.
///
/// ```swift
/// let currentUser = SharedValue<String?>(nil)
/// // in a reactor:
/// func transform(mutation: Flow<Mutation>) -> Flow<Mutation> {
///     mutation.merge(with: currentUser.values.map { Mutation.setUser($0) })
/// }
/// currentUser.value = "ada"   // every reactor merging it reduces .setUser("ada")
/// ```
public final class SharedValue<Value: Sendable>: Sendable {
    private struct Storage {
        var value: Value
        var nextID: UInt64 = 0
        var subscribers: [UInt64: AsyncStream<Value>.Continuation] = [:]
    }

    private let storage: Mutex<Storage>

    /// Starts with `value`.
    public init(_ value: Value) {
        storage = Mutex(Storage(value: value))
    }

    /// The current value; setting it broadcasts to every `values` stream.
    public var value: Value {
        get { storage.withLock { $0.value } }
        set { update { $0 = newValue } }
    }

    /// Changes the value in place under the lock and broadcasts the result.
    public func update(_ body: (inout Value) -> Void) {
        storage.withLock { storage in
            body(&storage.value)
            // Yielding under the lock keeps every subscriber's order equal to the order of updates.
            for (id, continuation) in storage.subscribers {
                if case .terminated = continuation.yield(storage.value) {
                    storage.subscribers[id] = nil
                }
            }
        }
    }

    /// How many `values` streams are currently listening.
    public var subscriberCount: Int { storage.withLock { $0.subscribers.count } }

    /// A stream that yields the current value, then every later one; a slow reader keeps only the newest.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = storage.withLock { storage in
            let id = storage.nextID
            storage.nextID += 1
            storage.subscribers[id] = continuation
            continuation.yield(storage.value)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.storage.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }
}
