import JSONCodec
import ReactorClient
import Testing

/// The client's RFC 6902 applier: the RFC's own examples (Appendix A), every prefix of every patch text (the
/// project's parser discipline: each one is refused cleanly, never half-read), every prefix of every list of
/// operations (applying the first k at once is applying them one by one), and the errors §4 asks for.
@Suite struct JSONPatchTests {
    static func json(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

    /// One case: a document, a patch, and the result (nil: the patch must fail).
    struct Case: Sendable, CustomStringConvertible {
        var name: String
        var document: String
        var patch: String
        var result: String?
        var description: String { name }
    }

    /// RFC 6902 Appendix A, in its order and words.
    static let appendixA: [Case] = [
        Case(
            name: "A.1 adding an object member", document: #"{"foo":"bar"}"#,
            patch: #"[{ "op": "add", "path": "/baz", "value": "qux" }]"#, result: #"{"baz":"qux","foo":"bar"}"#),
        Case(
            name: "A.2 adding an array element", document: #"{"foo":["bar","baz"]}"#,
            patch: #"[{ "op": "add", "path": "/foo/1", "value": "qux" }]"#, result: #"{"foo":["bar","qux","baz"]}"#),
        Case(
            name: "A.3 removing an object member", document: #"{"baz":"qux","foo":"bar"}"#,
            patch: #"[{ "op": "remove", "path": "/baz" }]"#, result: #"{"foo":"bar"}"#),
        Case(
            name: "A.4 removing an array element", document: #"{"foo":["bar","qux","baz"]}"#,
            patch: #"[{ "op": "remove", "path": "/foo/1" }]"#, result: #"{"foo":["bar","baz"]}"#),
        Case(
            name: "A.5 replacing a value", document: #"{"baz":"qux","foo":"bar"}"#,
            patch: #"[{ "op": "replace", "path": "/baz", "value": "boo" }]"#, result: #"{"baz":"boo","foo":"bar"}"#),
        Case(
            name: "A.6 moving a value", document: #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
            patch: #"[{ "op": "move", "from": "/foo/waldo", "path": "/qux/thud" }]"#,
            result: #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#),
        Case(
            name: "A.7 moving an array element", document: #"{"foo":["all","grass","cows","eat"]}"#,
            patch: #"[{ "op": "move", "from": "/foo/1", "path": "/foo/3" }]"#,
            result: #"{"foo":["all","cows","eat","grass"]}"#),
        Case(
            name: "A.8 testing a value: success", document: #"{"baz":"qux","foo":["a",2,"c"]}"#,
            patch: #"[{ "op": "test", "path": "/baz", "value": "qux" },"#
                + #"{ "op": "test", "path": "/foo/1", "value": 2 }]"#,
            result: #"{"baz":"qux","foo":["a",2,"c"]}"#),
        Case(
            name: "A.9 testing a value: error", document: #"{"baz":"qux"}"#,
            patch: #"[{ "op": "test", "path": "/baz", "value": "bar" }]"#, result: nil),
        Case(
            name: "A.10 adding a nested member object", document: #"{"foo":"bar"}"#,
            patch: #"[{ "op": "add", "path": "/child", "value": { "grandchild": { } } }]"#,
            result: #"{"foo":"bar","child":{"grandchild":{}}}"#),
        Case(
            name: "A.11 ignoring unrecognized elements", document: #"{"foo":"bar"}"#,
            patch: #"[{ "op": "add", "path": "/baz", "value": "qux", "xyz": 123 }]"#,
            result: #"{"foo":"bar","baz":"qux"}"#),
        Case(
            name: "A.12 adding to a nonexistent target", document: #"{"foo":"bar"}"#,
            patch: #"[{ "op": "add", "path": "/baz/bat", "value": "qux" }]"#, result: nil),
        Case(
            name: "A.13 invalid JSON Patch document", document: #"{"foo":"bar"}"#,
            patch: #"[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]"#, result: nil),
        Case(
            name: "A.14 ~ escape ordering", document: #"{"/":9,"~1":10}"#,
            patch: #"[{"op": "test", "path": "/~01", "value": 10}]"#, result: #"{"/":9,"~1":10}"#),
        Case(
            name: "A.15 comparing strings and numbers", document: #"{"/":9,"~1":10}"#,
            patch: #"[{"op": "test", "path": "/~01", "value": "10"}]"#, result: nil),
        Case(
            name: "A.16 adding an array value", document: #"{"foo":["bar"]}"#,
            patch: #"[{ "op": "add", "path": "/foo/-", "value": ["abc", "def"] }]"#,
            result: #"{"foo":["bar",["abc","def"]]}"#),
    ]

    /// What §4 and RFC 6901 ask for beyond the appendix.
    static let more: [Case] = [
        Case(
            name: "replace keeps the member's place", document: #"{"a":1,"b":2,"c":3}"#,
            patch: #"[{"op":"replace","path":"/b","value":20}]"#, result: #"{"a":1,"b":20,"c":3}"#),
        Case(
            name: "replace of the whole document", document: #"{"a":1}"#,
            patch: #"[{"op":"replace","path":"","value":[1]}]"#, result: "[1]"),
        Case(
            name: "add of the whole document", document: "1", patch: #"[{"op":"add","path":"","value":{"b":2}}]"#,
            result: #"{"b":2}"#),
        Case(name: "remove of the whole document", document: "1", patch: #"[{"op":"remove","path":""}]"#, result: nil),
        Case(
            name: "replace of a missing member", document: #"{"a":1}"#,
            patch: #"[{"op":"replace","path":"/b","value":2}]"#, result: nil),
        Case(
            name: "remove of a missing element", document: "[1]", patch: #"[{"op":"remove","path":"/1"}]"#,
            result: nil),
        Case(name: "add past the end", document: "[1]", patch: #"[{"op":"add","path":"/2","value":2}]"#, result: nil),
        Case(name: "add at the end", document: "[1]", patch: #"[{"op":"add","path":"/1","value":2}]"#, result: "[1,2]"),
        Case(
            name: "a leading zero is no index", document: "[1,2]", patch: #"[{"op":"remove","path":"/01"}]"#,
            result: nil),
        Case(name: "- only appends", document: "[1,2]", patch: #"[{"op":"remove","path":"/-"}]"#, result: nil),
        Case(name: "a member named -", document: #"{"-":1}"#, patch: #"[{"op":"remove","path":"/-"}]"#, result: "{}"),
        Case(
            name: "into a scalar", document: #"{"a":1}"#, patch: #"[{"op":"add","path":"/a/b","value":2}]"#,
            result: nil),
        Case(
            name: "move into its own child", document: #"{"a":{"b":1}}"#,
            patch: #"[{"op":"move","from":"/a","path":"/a/c"}]"#, result: nil),
        Case(
            name: "move onto itself", document: #"{"a":{"b":1}}"#, patch: #"[{"op":"move","from":"/a","path":"/a"}]"#,
            result: #"{"a":{"b":1}}"#),
        Case(
            name: "copy", document: #"{"a":[1,{"b":2}]}"#, patch: #"[{"op":"copy","from":"/a/1","path":"/c"}]"#,
            result: #"{"a":[1,{"b":2}],"c":{"b":2}}"#),
        Case(
            name: "test ignores member order and number spelling", document: #"{"a":{"x":1,"y":[2.0]}}"#,
            patch: #"[{"op":"test","path":"/a","value":{"y":[2],"x":1.0}}]"#, result: #"{"a":{"x":1,"y":[2.0]}}"#),
        Case(
            name: "value null is a value", document: "{}", patch: #"[{"op":"add","path":"/a","value":null}]"#,
            result: #"{"a":null}"#),
        Case(name: "no value", document: "{}", patch: #"[{"op":"add","path":"/a"}]"#, result: nil),
        Case(name: "unknown op", document: "{}", patch: #"[{"op":"merge","path":"/a","value":1}]"#, result: nil),
        Case(name: "no op", document: "{}", patch: #"[{"path":"/a","value":1}]"#, result: nil),
        Case(
            name: "a path that is no pointer", document: #"{"a":1}"#, patch: #"[{"op":"remove","path":"a"}]"#,
            result: nil),
        Case(name: "a bad escape", document: #"{"a":1}"#, patch: #"[{"op":"remove","path":"/~2"}]"#, result: nil),
        Case(name: "not an array", document: "{}", patch: #"{"op":"add","path":"/a","value":1}"#, result: nil),
        Case(name: "the empty patch", document: #"{"a":1}"#, patch: "[]", result: #"{"a":1}"#),
        Case(
            name: "a later failure undoes the earlier operations", document: #"{"a":1}"#,
            patch: #"[{"op":"replace","path":"/a","value":2},{"op":"test","path":"/a","value":1}]"#, result: nil),
    ]

    /// The patch applied, or nil when reading or applying it fails (with a message naming why).
    static func outcome(_ test: Case) throws -> JSONValue? {
        let document = try json(test.document)
        do {
            let applied = try JSONPatch(json: Array(test.patch.utf8)).apply(to: document)
            return applied
        } catch {
            #expect(!error.message.isEmpty)
            return nil
        }
    }

    @Test(arguments: appendixA + more)
    func applies(_ test: Case) throws {
        let outcome = try Self.outcome(test)
        #expect(outcome == (try test.result.map(Self.json)), "\(test.name)")
    }

    /// JSON objects have no order, but a client shows the state as the server wrote it: a replaced member stays
    /// where it was, and an added one comes last.
    @Test func membersKeepTheirOrder() throws {
        let text = #"[{"op":"replace","path":"/b","value":20},{"op":"add","path":"/d","value":4}]"#
        let patched = try JSONPatch(json: Array(text.utf8)).apply(to: Self.json(#"{"a":1,"b":2,"c":3}"#))
        #expect(patched.serializedString() == #"{"a":1,"b":20,"c":3,"d":4}"#)
    }

    /// Every proper prefix of every patch's text is refused as a whole, with a message: none is half-applied.
    @Test(arguments: appendixA + more)
    func everyPrefixOfThePatchTextIsRefused(_ test: Case) throws {
        let bytes = Array(test.patch.utf8)
        for end in 0..<bytes.count {
            do {
                _ = try JSONPatch(json: bytes[..<end])
                let prefix = String(decoding: bytes[..<end], as: UTF8.self)
                Issue.record("\(test.name): the prefix \(prefix) was read as a patch")
            } catch {
                #expect(error.operation == nil && !error.message.isEmpty)
            }
        }
    }

    /// Applying the first k operations at once gives what applying them one at a time gives, for every k.
    @Test(arguments: appendixA + more)
    func everyPrefixOfTheOperationsAppliesAsOneByOne(_ test: Case) throws {
        guard let patch = try? JSONPatch(json: Array(test.patch.utf8)) else { return }
        let document = try Self.json(test.document)
        var stepwise: JSONValue? = document
        for count in 0...patch.operations.count {
            let prefix = JSONPatch(Array(patch.operations.prefix(count)))
            #expect((try? prefix.apply(to: document)) == stepwise, "\(test.name), \(count) operations")
            if count < patch.operations.count {
                stepwise = stepwise.flatMap { try? JSONPatch([patch.operations[count]]).apply(to: $0) }
            }
        }
    }

    @Test func aFailureNamesTheOperationAndThePlace() throws {
        let text = #"[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/items/7/done"}]"#
        let patch = try JSONPatch(json: Array(text.utf8))
        let document = try Self.json(#"{"items":[{"done":true}]}"#)
        do {
            _ = try patch.apply(to: document)
            Issue.record("applied")
        } catch {
            #expect(error.operation == 1)
            #expect(error.description == #"operation 1: "/items/7/done" does not exist: "/items/7" is missing"#)
        }
    }
}
