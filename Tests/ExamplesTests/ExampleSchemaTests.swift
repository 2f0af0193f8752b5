import Examples
import JSONCodec
import Reactors
import Testing

/// Each example's declared schema says exactly what its `Codable` does: every body the schema allows
/// decodes, and every body it refuses fails to decode (the server's 422). The OpenAPI document and the
/// fuzzer rely on that.
@Suite struct ExampleSchemaTests {
    /// Bodies the schema must allow and the decoder accept, then bodies both must refuse.
    struct Table: Sendable {
        var validActions: [String]
        var invalidActions: [String]
        var validStates: [String]
        var invalidStates: [String]
    }

    static func agree<R: Reactor>(_ reactor: R, _ schema: ReactorSchema, _ table: Table, examples: [String]) throws {
        let parse = { (text: String) throws -> JSONValue in try JSONParser().parse(Array(text.utf8)) }
        for text in table.validActions + examples {
            let violations = schema.actionSchema.validate(try parse(text))
            #expect(violations.isEmpty, "schema refuses \(text): \(violations)")
            #expect(throws: Never.self, "decoder refuses \(text)") {
                _ = try decodeAction(R.Action.self, from: Array(text.utf8))
            }
        }
        for text in table.invalidActions {
            let value = try parse(text)
            #expect(!schema.actionSchema.validate(value).isEmpty, "schema allows \(text)")
            #expect(throws: ActionDecodingError.self, "decoder accepts \(text)") {
                _ = try decodeAction(R.Action.self, from: Array(text.utf8))
            }
        }
        let initial = try JSONValueEncoder().encodeValue(reactor.initialState)
        #expect(
            schema.state.validate(initial).isEmpty, "the initial state \(initial): \(schema.state.validate(initial))")
        for text in table.validStates {
            let violations = schema.state.validate(try parse(text))
            #expect(violations.isEmpty, "schema refuses the state \(text): \(violations)")
            let state = try JSONValueDecoder().decode(R.State.self, from: Array(text.utf8))
            // What the server sends back for it fits the schema too.
            let encoded = try JSONValueEncoder().encodeValue(state)
            #expect(
                schema.state.validate(encoded).isEmpty,
                "\(text) comes back as \(encoded): \(schema.state.validate(encoded))")
        }
        for text in table.invalidStates {
            let value = try parse(text)
            #expect(!schema.state.validate(value).isEmpty, "schema allows the state \(text)")
            #expect(throws: (any Error).self, "decoder accepts the state \(text)") {
                _ = try JSONValueDecoder().decode(R.State.self, from: Array(text.utf8))
            }
        }
    }

    @Test func counter() throws {
        try Self.agree(
            CounterReactor(), CounterReactor.schema,
            Table(
                validActions: [#"{"type":"increase"}"#, #"{"type":"decrease","ignored":[1]}"#],
                invalidActions: [#"{"type":"reset"}"#, "{}", #"{"type":1}"#, "[]", #""increase""#],
                validStates: [
                    #"{"value":0}"#, #"{"value":-9223372036854775808}"#, #"{"value":9223372036854775807,"extra":true}"#,
                    #"{"value":2.0}"#,
                ],
                invalidStates: [
                    "{}", #"{"value":"1"}"#, #"{"value":1.5}"#, #"{"value":9223372036854775808}"#, "null",
                    #"{"value":null}"#,
                ]),
            examples: CounterReactor.exampleActions)
    }

    @Test func fruit() throws {
        try Self.agree(
            FruitReactor(), FruitReactor.schema,
            Table(
                validActions: [
                    #"{"type":"apple"}"#, #"{"type":"grapes","when":"now"}"#, #"{"type":"banana"}"#,
                    #"{"type":"cherries"}"#,
                    #"{"type":"orange","ripe":true}"#,
                ],
                invalidActions: [
                    #"{"type":"kiwi"}"#, #"{"type":"Apple"}"#, #"{"kind":"apple"}"#, #"{"type":"cherry"}"#,
                    #"{"type":"Orange"}"#, #"{"type":"oranges"}"#,
                ],
                validStates: [
                    #"{"fruitName":"","isLoading":false}"#, #"{"fruitName":"cherries","isLoading":true}"#,
                    #"{"fruitName":"Kiwi","isLoading":true}"#,
                ],
                invalidStates: [
                    #"{"fruitName":""}"#, #"{"isLoading":true}"#, #"{"fruitName":1,"isLoading":true}"#,
                    #"{"fruitName":null,"isLoading":false}"#, #"{"fruitName":"","isLoading":0}"#,
                ]),
            examples: FruitReactor.exampleActions)
    }

    @Test func todo() throws {
        try Self.agree(
            TodoReactor(), TodoReactor.schema,
            Table(
                validActions: [
                    #"{"type":"add","title":""}"#, #"{"type":"toggle","id":-5}"#,
                    #"{"type":"remove","id":9223372036854775807}"#,
                    #"{"type":"toggle","id":1.0}"#, #"{"type":"clearCompleted","id":"ignored"}"#,
                ],
                invalidActions: [
                    #"{"type":"add"}"#, #"{"type":"add","title":null}"#, #"{"type":"add","title":1}"#,
                    #"{"type":"toggle","id":"1"}"#,
                    #"{"type":"toggle","id":1.5}"#, #"{"type":"toggle","id":9223372036854775808}"#,
                    #"{"type":"remove"}"#, #"{"type":"clear"}"#,
                ],
                validStates: [
                    #"{"items":[],"nextID":1,"alert":null}"#,
                    #"{"items":[{"id":1,"title":"a","done":true}],"nextID":-3,"alert":"x"}"#,
                ],
                invalidStates: [
                    #"{"items":[],"nextID":1}"#, #"{"items":[{"id":1,"title":"a"}],"nextID":1,"alert":null}"#,
                    #"{"items":{},"nextID":1,"alert":null}"#,
                    #"{"items":[],"nextID":1,"alert":1}"#, #"{"nextID":1,"alert":null}"#,
                ]),
            examples: TodoReactor.exampleActions)
    }

    @Test func search() throws {
        try Self.agree(
            SearchReactor(), SearchReactor.schema,
            Table(
                validActions: [
                    #"{"type":"updateQuery","query":"swift"}"#, #"{"type":"updateQuery","query":null}"#,
                    #"{"type":"updateQuery"}"#, #"{"type":"loadNextPage"}"#,
                ],
                invalidActions: [
                    #"{"type":"updateQuery","query":1}"#, #"{"type":"updateQuery","query":["a"]}"#,
                    #"{"type":"search"}"#,
                ],
                validStates: [
                    #"{"items":[],"isLoading":false}"#,
                    #"{"query":null,"items":["a"],"nextPage":null,"isLoading":true,"error":null}"#,
                    #"{"query":"q","items":[],"nextPage":2,"isLoading":false,"error":"down"}"#,
                ],
                invalidStates: [
                    #"{"isLoading":false}"#, #"{"items":[]}"#, #"{"items":[1],"isLoading":false}"#,
                    #"{"items":[],"isLoading":false,"nextPage":"2"}"#, #"{"items":[],"isLoading":false,"query":5}"#,
                ]),
            examples: SearchReactor.exampleActions)
    }
}
