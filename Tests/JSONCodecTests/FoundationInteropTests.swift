import Foundation
import JSONCodec
import Testing

/// `JSONValue` is plain `Codable`, so other coders (here Foundation's) can carry it too.
@Suite struct FoundationInteropTests {
    @Test func jsonValueRoundTripsThroughFoundation() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", nil, true], "b": ["c": .number(.int(-3))]]
        let data = try JSONEncoder().encode(value)
        let back = try JSONDecoder().decode(JSONValue.self, from: data)
        #expect(back == value)
        #expect(try JSONParser().parse(data) == value)
    }

    @Test func ourBytesDecodeWithFoundationForPlainStructs() throws {
        struct Item: Codable, Equatable {
            var id: Int
            var name: String
            var tags: [String]
            var score: Double?
        }
        let items = [Item(id: 1, name: "é\n\"", tags: ["a"], score: 0.1), Item(id: 2, name: "", tags: [], score: nil)]
        let ours = try JSONValueEncoder().encode(items)
        #expect(try JSONDecoder().decode([Item].self, from: Data(ours)) == items)
        #expect(try JSONValueDecoder().decode([Item].self, from: Array(try JSONEncoder().encode(items))) == items)
    }
}
