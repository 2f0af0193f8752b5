import JSONCodec
import ReactorServerTesting
import Testing

/// `JSONValue.patch(to:)`, the diff behind `?delta=json-patch`: small patches for the changes a state goes through
/// (one toggle in a list of a thousand is one `replace`), and every patch, also of random documents, turning the
/// old value into the new one when applied by the toolkit's independent applier.
@Suite struct JSONPatchDiffTests {
    static func json(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

    /// A todo list of `count` items, `done` set on those in `done`.
    static func todos(_ count: Int, done: Set<Int> = [], skipping: Set<Int> = []) -> JSONValue {
        let items: [JSONValue] = (0..<count).filter { !skipping.contains($0) }.map { index in
            let id = Int64(index + 1)
            return ["id": .number(.int(id)), "title": .string("item \(id)"), "done": .bool(done.contains(index))]
        }
        return ["items": .array(items), "nextID": .number(.int(Int64(count + 1))), "alert": nil]
    }

    /// The patch from `old` to `new` as text, after checking that it applies.
    static func patch(_ old: JSONValue, _ new: JSONValue) throws -> String {
        let patch = old.patch(to: new)
        #expect(try TestJSONPatch.apply(patch, to: old) == new, "\(patch) does not turn \(old) into \(new)")
        return patch.serializedString()
    }

    @Test func aToggleInAThousandItemsIsOneReplace() throws {
        let patch = try Self.patch(Self.todos(1000), Self.todos(1000, done: [517]))
        #expect(patch == #"[{"op":"replace","path":"/items/517/done","value":true}]"#)
    }

    @Test func anAppendIsOneAddAndARemovalOneRemove() throws {
        let longer = ["items": .array((0..<1001).map { _ in JSONValue.number(.int(1)) })] as JSONValue
        let shorter = ["items": .array((0..<1000).map { _ in JSONValue.number(.int(1)) })] as JSONValue
        #expect(try Self.patch(shorter, longer) == #"[{"op":"add","path":"/items/1000","value":1}]"#)
        // Removing item 300 (id 301) of the todo list, and the next id left alone.
        var removed = Self.todos(1000, skipping: [300])
        if case .object(var object) = removed {
            object["nextID"] = .number(.int(1001))
            removed = .object(object)
        }
        #expect(try Self.patch(Self.todos(1000), removed) == #"[{"op":"remove","path":"/items/300"}]"#)
        #expect(
            try Self.patch(removed, Self.todos(1000))
                == #"[{"op":"add","path":"/items/300","value":{"id":301,"title":"item 301","done":false}}]"#)
    }

    @Test func aRemovalAndAToggleFarApartAreTwoOperations() throws {
        var new = Self.todos(100, done: [80], skipping: [10])
        if case .object(var object) = new {
            object["nextID"] = .number(.int(101))
            new = .object(object)
        }
        // Item 80 is at index 79 once item 10 is gone.
        #expect(
            try Self.patch(Self.todos(100), new)
                == #"[{"op":"remove","path":"/items/10"},{"op":"replace","path":"/items/79/done","value":true}]"#)
    }

    @Test func aShiftedListIsARemoveAndAnAdd() throws {
        let old = JSONValue.array((0..<200).map { .number(.int(Int64($0))) })
        let new = JSONValue.array((1...200).map { .number(.int(Int64($0))) })
        #expect(try Self.patch(old, new) == #"[{"op":"remove","path":"/0"},{"op":"add","path":"/199","value":200}]"#)
    }

    @Test func membersAreAddedRemovedAndReplacedWithEscapedNames() throws {
        let old = try Self.json(#"{"a/b":1,"m~n":{"x":[1,2]},"gone":true,"same":"s"}"#)
        let new = try Self.json(#"{"a/b":2,"m~n":{"x":[1,2,3]},"same":"s","new\"key":null}"#)
        let expected =
            #"[{"op":"replace","path":"/a~1b","value":2},{"op":"add","path":"/m~0n/x/2","value":3},"#
            + #"{"op":"remove","path":"/gone"},{"op":"add","path":"/new\"key","value":null}]"#
        #expect(try Self.patch(old, new) == expected)
    }

    @Test(arguments: [
        (#"{"a":1}"#, #"{"a":1}"#, "[]"),
        ("1", "2", #"[{"op":"replace","path":"","value":2}]"#),
        (#"{"a":1}"#, "[1]", #"[{"op":"replace","path":"","value":[1]}]"#),
        (#"{"a":[1]}"#, #"{"a":{"0":1}}"#, #"[{"op":"replace","path":"/a","value":{"0":1}}]"#),
        ("null", #"{"a":1}"#, #"[{"op":"replace","path":"","value":{"a":1}}]"#),
        ("[1,2,3]", "[]", #"[{"op":"remove","path":"/0"},{"op":"remove","path":"/0"},{"op":"remove","path":"/0"}]"#),
        ("[]", "[1,2]", #"[{"op":"add","path":"/0","value":1},{"op":"add","path":"/1","value":2}]"#),
        // Numbers compare by value: 1 and 1.0 are the same number.
        ("[1]", "[1.0]", "[]"),
    ])
    func smallCases(old: String, new: String, expected: String) throws {
        #expect(try Self.patch(try Self.json(old), try Self.json(new)) == expected)
    }

    /// Random documents and random edits of them (members added, removed and changed; elements inserted, removed,
    /// moved and changed; whole arrays reversed past the aligned edits): every patch applies and gives the new one.
    @Test func everyPatchOfRandomEditsTurnsTheOldDocumentIntoTheNew() throws {
        var random = RandomJSON(seed: 0x5eed_2612)
        for round in 0..<3000 {
            let old = random.document(depth: 3)
            var new = old
            for _ in 0...random.below(4) { new = random.edit(new, depth: 3) }
            let patch = old.patch(to: new)
            let applied = try TestJSONPatch.apply(patch, to: old)
            #expect(applied == new, "round \(round): \(patch) turns \(old) into \(applied), not \(new)")
            if old == new { #expect(patch == [], "round \(round): equal documents gave \(patch)") }
        }
    }
}

/// A small deterministic generator (RandomJSON64) of JSON documents and edits.
struct RandomJSON {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func scalar() -> JSONValue {
        switch below(5) {
        case 0: .null
        case 1: .bool(below(2) == 0)
        case 2: .number(.int(Int64(below(5))))
        case 3: .string(["a", "b", "~", "/", "a/b~c"][below(5)])
        default: .number(.double(Double(below(4)) / 2))
        }
    }

    mutating func key() -> String { ["a", "b", "c", "x/y", "m~n", "0", "-"][below(7)] }

    mutating func document(depth: Int) -> JSONValue {
        guard depth > 0, below(3) != 0 else { return scalar() }
        if below(2) == 0 {
            return .array((0..<below(8)).map { _ in document(depth: depth - 1) })
        }
        var object = JSONObject()
        for _ in 0..<below(5) { object[key()] = document(depth: depth - 1) }
        return .object(object)
    }

    /// `value` with one random change somewhere inside it.
    mutating func edit(_ value: JSONValue, depth: Int) -> JSONValue {
        switch value {
        case .array(var array):
            let choice = below(7)
            if choice == 0 || array.isEmpty {
                array.insert(document(depth: depth - 1), at: below(array.count + 1))
            } else if choice == 1 {
                array.remove(at: below(array.count))
            } else if choice == 2 {
                array.append(array.remove(at: below(array.count)))
            } else if choice == 3 {
                array.reverse()
            } else {
                let index = below(array.count)
                array[index] = edit(array[index], depth: depth - 1)
            }
            return .array(array)
        case .object(var object):
            let choice = below(4)
            if choice == 0 || object.isEmpty {
                object[key()] = document(depth: depth - 1)
            } else if choice == 1 {
                object[object.keys[below(object.count)]] = nil
            } else {
                let name = object.keys[below(object.count)]
                object[name] = edit(object[name]!, depth: depth - 1)
            }
            return .object(object)
        default:
            return below(4) == 0 ? document(depth: depth) : scalar()
        }
    }
}
