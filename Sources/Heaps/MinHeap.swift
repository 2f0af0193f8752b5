/// A binary min-heap of values by a `Comparable` key: `first` is an entry with the smallest key, `push` and
/// `removeFirst` cost O(log n). Entries with equal keys come out in no promised order; an entry is never
/// passed over for a larger one. Whatever removes entries early (lazy deletion, stamps) is the user's.
///
/// ```swift
/// var deadlines = MinHeap<Int, String>()
/// deadlines.push(30, "later")
/// deadlines.push(10, "sooner")
/// while let due = deadlines.first, due.key <= 20 { print(deadlines.removeFirst().value) }   // "sooner"
/// ```
public struct MinHeap<Key: Comparable, Value> {
    /// The entries in heap order: each key is at most those of its children (`2i + 1`, `2i + 2`).
    @usableFromInline var entries: [(key: Key, value: Value)] = []

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { entries.isEmpty }

    @inlinable public var count: Int { entries.count }

    /// An entry with the smallest key, nil when empty.
    @inlinable public var first: (key: Key, value: Value)? { entries.first }

    /// Adds `value` at `key`.
    @inlinable
    public mutating func push(_ key: Key, _ value: Value) {
        entries.append((key, value))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].key < entries[parent].key else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns an entry with the smallest key; the heap must not be empty.
    @inlinable
    @discardableResult
    public mutating func removeFirst() -> (key: Key, value: Value) {
        let first = entries[0]
        let last = entries.removeLast()
        guard !entries.isEmpty else { return first }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].key < entries[smallest].key { smallest = left }
            if right < entries.count, entries[right].key < entries[smallest].key { smallest = right }
            guard smallest != parent else { return first }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Removes and returns the first entry when its key is at most `limit` (something due by then).
    @inlinable
    public mutating func removeFirst(ifAtMost limit: Key) -> (key: Key, value: Value)? {
        guard let first = entries.first, first.key <= limit else { return nil }
        return removeFirst()
    }

    /// Removes every entry.
    @inlinable
    public mutating func removeAll() { entries.removeAll() }
}

extension MinHeap: Sendable where Key: Sendable, Value: Sendable {}
