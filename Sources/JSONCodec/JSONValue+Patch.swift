/// RFC 6902 JSON Patches between two documents: what an event stream with `?delta=json-patch` sends
/// instead of a whole state.
extension JSONValue {
    /// The RFC 6902 JSON Patch (an array of `add`, `remove` and `replace` operations) that turns this value
    /// into `target`: empty when they are equal. Objects are compared member by member; arrays keep their
    /// common start and end, so one changed element is patched inside (`/items/517/done`), an append is one
    /// `add` and a removal one `remove`, and what differs in between is aligned element by element.
    ///
    /// ```swift
    /// let old = try JSONParser().parse(Array(#"{"items":[{"done":false},{"done":false}]}"#.utf8))
    /// let new = try JSONParser().parse(Array(#"{"items":[{"done":false},{"done":true}]}"#.utf8))
    /// old.patch(to: new).serializedString()   // [{"op":"replace","path":"/items/1/done","value":true}]
    /// ```
    public func patch(to target: JSONValue) -> JSONValue {
        var differ = JSONPatchDiffer()
        differ.diff(self, target)
        return .array(differ.operations)
    }
}

/// Walks two documents side by side and writes the operations that turn one into the other, each with the
/// pointer of the place it works on (indexes as the array is at that point of the patch).
struct JSONPatchDiffer {
    private(set) var operations: [JSONValue] = []
    /// The reference tokens of the place being compared, outermost first.
    private var tokens: [String] = []

    /// Past this many insertions and removals in the part of an array that differs, its elements are paired by
    /// position instead of aligned on what they have in common: the patch stays correct, only longer.
    static let alignmentEdits = 32

    mutating func diff(_ old: JSONValue, _ new: JSONValue) {
        switch (old, new) {
        case (.object(let before), .object(let after)): diffObjects(before, after)
        case (.array(let before), .array(let after)): diffArrays(before, after)
        default: if old != new { emit("replace", value: new) }
        }
    }

    private mutating func diffObjects(_ old: JSONObject, _ new: JSONObject) {
        for (key, value) in old {
            tokens.append(key)
            if let other = new[key] { diff(value, other) } else { emit("remove", value: nil) }
            tokens.removeLast()
        }
        for (key, value) in new where !old.contains(key: key) {
            tokens.append(key)
            emit("add", value: value)
            tokens.removeLast()
        }
    }

    private mutating func diffArrays(_ old: [JSONValue], _ new: [JSONValue]) {
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix < shorter, old[prefix] == new[prefix] { prefix += 1 }
        if prefix == old.count, prefix == new.count { return }
        var suffix = 0
        while suffix < shorter - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let removed = old[prefix..<(old.count - suffix)]
        let added = new[prefix..<(new.count - suffix)]
        var index = prefix
        let trivial = removed.isEmpty || added.isEmpty || (removed.count == 1 && added.count == 1)
        guard !trivial, let kept = Self.commonElements(removed, added, maxEdits: Self.alignmentEdits) else {
            return replace(removed, by: added, at: &index)
        }
        // Each run between two kept elements is replaced by the run of new elements between them.
        var (nextOld, nextNew) = (removed.startIndex, added.startIndex)
        for (keptOld, keptNew) in kept {
            replace(removed[nextOld..<keptOld], by: added[nextNew..<keptNew], at: &index)
            index += 1
            (nextOld, nextNew) = (keptOld + 1, keptNew + 1)
        }
        replace(removed[nextOld...], by: added[nextNew...], at: &index)
    }

    /// Turns the run `old` (at `index` in the array as patched so far) into `new`: elements paired by position
    /// are patched inside, the old ones left over removed, the new ones left over added. `index` ends after it.
    private mutating func replace(_ old: ArraySlice<JSONValue>, by new: ArraySlice<JSONValue>, at index: inout Int) {
        let paired = min(old.count, new.count)
        for offset in 0..<paired {
            tokens.append(String(index))
            diff(old[old.startIndex + offset], new[new.startIndex + offset])
            tokens.removeLast()
            index += 1
        }
        for _ in paired..<old.count {
            tokens.append(String(index))
            emit("remove", value: nil)
            tokens.removeLast()
        }
        for offset in paired..<new.count {
            tokens.append(String(index))
            emit("add", value: new[new.startIndex + offset])
            tokens.removeLast()
            index += 1
        }
    }

    /// The positions of elements `old` and `new` keep in common, in order, as few removals and insertions apart
    /// as there can be (Myers' O(ND) difference algorithm); nil when that takes more than `maxEdits`.
    static func commonElements(
        _ old: ArraySlice<JSONValue>, _ new: ArraySlice<JSONValue>, maxEdits: Int
    ) -> [(old: Int, new: Int)]? {
        let (n, m) = (old.count, new.count)
        let offset = maxEdits + 1
        // furthest[k + offset]: how far along `old` the best path on diagonal k (x - y) has got.
        var furthest = [Int](repeating: 0, count: 2 * offset + 1)
        var trace: [[Int]] = []
        var found: Int?
        search: for edits in 0...maxEdits {
            trace.append(furthest)
            for k in stride(from: -edits, through: edits, by: 2) {
                let down = k == -edits || (k != edits && furthest[k - 1 + offset] < furthest[k + 1 + offset])
                var x = down ? furthest[k + 1 + offset] : furthest[k - 1 + offset] + 1
                var y = x - k
                while x < n, y < m, old[old.startIndex + x] == new[new.startIndex + y] {
                    x += 1
                    y += 1
                }
                furthest[k + offset] = x
                if x >= n, y >= m {
                    found = edits
                    break search
                }
            }
        }
        guard let edits = found else { return nil }
        // Back from the end: each step of the path is an edit followed by a run of kept elements.
        var kept: [(old: Int, new: Int)] = []
        var (x, y) = (n, m)
        for step in stride(from: edits, through: 0, by: -1) {
            let k = x - y
            var start = (x: 0, y: 0)
            var previous = (x: 0, y: 0)
            if step > 0 {
                let before = trace[step]
                let down = k == -step || (k != step && before[k - 1 + offset] < before[k + 1 + offset])
                let previousK = down ? k + 1 : k - 1
                previous.x = before[previousK + offset]
                previous.y = previous.x - previousK
                start = down ? (previous.x, previous.y + 1) : (previous.x + 1, previous.y)
            }
            while x > start.x, y > start.y {
                x -= 1
                y -= 1
                kept.append((old.startIndex + x, new.startIndex + y))
            }
            (x, y) = previous
        }
        return kept.reversed()
    }

    /// One operation at the current place; `value` for `add` and `replace`.
    private mutating func emit(_ op: String, value: JSONValue?) {
        let path = JSONPointer(tokens: tokens).description
        var members: [(String, JSONValue)] = [("op", .string(op)), ("path", .string(path))]
        if let value { members.append(("value", value)) }
        operations.append(.object(JSONObject(members)))
    }
}
