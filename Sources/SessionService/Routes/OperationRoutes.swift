import HTTPServer
import JSONCodec

// What operators and tools read: the pages, the icon, health, metrics, the API description, the reactors.
extension ReactorService {
    /// `GET /reactors`: every hosted reactor with its initial state and example actions.
    static func reactorsJSON(_ catalog: ReactorCatalog) -> [UInt8] {
        var out = JSONWriter(capacity: 1024)
        out.raw("{\"reactors\":[")
        for (index, definition) in catalog.definitions.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"name\":")
            out.string(definition.name)
            out.raw(",\"description\":")
            out.string(definition.summary)
            out.raw(",\"initialState\":")
            out.raw(definition.initialState)
            out.raw(",\"actions\":[")
            var first = true
            for example in definition.exampleActions {
                // Examples are the registrant's text: include only those that are JSON.
                guard let value = try? JSONParser().parse(Array(example.utf8)) else { continue }
                if !first { out.raw(",") }
                first = false
                out.raw(value.serialized())
            }
            out.raw("]}")
        }
        out.raw("]}")
        return out.bytes
    }
}
