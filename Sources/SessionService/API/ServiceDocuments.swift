import JSONCodec

/// The documents the service answers unchanged for its whole life, built once at start: `/openapi.json` whole and
/// narrowed to each reactor (`?reactor=`), and `/reactors`.
struct ServiceDocuments: Sendable {
    /// `/openapi.json`: every hosted reactor.
    let openAPI: [UInt8]
    /// `/openapi.json?reactor=NAME`, by reactor name.
    let openAPIByReactor: [String: [UInt8]]
    /// `/reactors`.
    let reactors: [UInt8]

    /// The documents for `catalog` as `settings` describe the server.
    init(catalog: ReactorCatalog, settings: OpenAPIDocument.Settings) {
        let document = OpenAPIDocument(definitions: catalog.definitions, settings: settings)
        openAPI = document.json(reactor: nil)
        openAPIByReactor = Dictionary(
            catalog.definitions.map { ($0.name, document.json(reactor: $0.name)) },
            uniquingKeysWith: { _, last in last })
        reactors = Self.reactors(catalog)
    }

    /// `GET /reactors`: every hosted reactor with its initial state and example actions.
    static func reactors(_ catalog: ReactorCatalog) -> [UInt8] {
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
            if let example = definition.exampleParams {
                out.raw(",\"params\":")
                out.raw(example)
            }
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
