import Examples
import HTTPServer
import JSONCodec
import Testing

@testable import SessionService

/// The one vocabulary of errors (``APIError/Kind``): its rows are distinct and well formed, the HTTP server's
/// own refusals keep the status the server gives them, and `/openapi.json` describes every error of it.
@Suite struct APIErrorVocabularyTests {
    /// Errors no operation of the document lists: a path no route serves, a method a path is not served with
    /// (both told in the document's introduction), and a preflight (`OPTIONS`) from an origin not allowed.
    static let unrouted: Set<APIError.Kind> = [.notFound, .methodNotAllowed, .originNotAllowed]

    @Test func rowsAreDistinctAndWellFormed() {
        var seen: [String: APIError.Kind] = [:]
        for kind in APIError.Kind.allCases {
            let row = kind.row
            #expect((400...599).contains(row.status), "\(kind): status \(row.status)")
            // A reactor's middleware refuses with codes of its own: that kind alone has none.
            let snakeCase = !row.code.isEmpty && row.code.allSatisfy { $0 == "_" || ("a"..."z").contains($0) }
            #expect(snakeCase || (kind == .refusedByReactor && row.code.isEmpty), "\(kind): \(row.code)")
            #expect(row.description.hasSuffix("."), "\(kind): \(row.description)")
            let key = "\(row.status) \(row.code)"
            #expect(seen[key] == nil, "\(kind) and \(seen[key].map { "\($0)" } ?? "") are both \(key)")
            seen[key] = kind
        }
    }

    @Test(arguments: HTTPRejection.Kind.allCases)
    func refusalsOfTheHTTPServerKeepTheirStatus(kind: HTTPRejection.Kind) {
        let rejection = HTTPRejection(kind, "refused")
        let error = APIError(rejection)
        let status = rejection.status.code
        #expect(error.status == status, "\(kind): the HTTP server answers \(status), the API \(error.status)")
        #expect(error.message == "refused")
    }

    /// Every error a route can answer is in its operation: those of its row, of its access check, the
    /// HTTP server's own (the storage refusal where the answer shows sessions); and every row of the
    /// vocabulary is in some operation, under some configuration.
    @Test func theDocumentDescribesEveryError() throws {
        var documented: Set<String> = []
        // A reactor with middlewares of its own, whose refusals have codes of their own.
        var catalog = ReactorCatalog()
        catalog.register("guarded", middlewares: { _ in [] }) { CounterReactor() }
        for var settings in Self.configurations {
            for definitions in [[], catalog.definitions] {
                settings.reactorMiddlewares = !definitions.isEmpty
                let document = OpenAPIDocument(definitions: definitions, settings: settings).document(reactor: nil)
                for entry in Route.table {
                    let codes = try Self.codes(of: entry, in: document)
                    documented.formUnion(codes)
                    Self.expectEveryError(of: entry, in: codes, settings)
                }
            }
        }
        let routed = Set(APIError.Kind.allCases.filter { !Self.unrouted.contains($0) }.map(\.code))
        #expect(routed.subtracting(documented).isEmpty, "never documented: \(routed.subtracting(documented).sorted())")
    }

    /// Expects the errors a route can answer so configured among `codes`, those of its operation.
    static func expectEveryError(of entry: Route.Entry, in codes: Set<String>, _ settings: OpenAPIDocument.Settings) {
        let name = "\(entry.method) \(entry.pattern) (\(settings.access))"
        for kind in HTTPRejection.Kind.allCases where kind != .notStored {
            #expect(codes.contains(APIError.Kind(kind).code), "\(name) lacks \(APIError.Kind(kind).code)")
        }
        if entry.needs.showsSessionState {
            #expect(codes.contains(APIError.Kind.storageUnavailable.code), "\(name) lacks storage_unavailable")
        }
        for answer in entry.documentation.answers where settings.allows(answer.condition) {
            if let code = answer.code { #expect(codes.contains(code), "\(name) lacks \(code)") }
        }
    }

    /// The error codes the operation of `entry` lists in `document`, those of the shared responses it refers to
    /// included.
    static func codes(of entry: Route.Entry, in document: JSONValue) throws -> Set<String> {
        let operation = try #require(document["paths"]?[entry.pattern]?[entry.method.lowercased()])
        let responses = try #require(operation["responses"]?.objectValue)
        var codes: Set<String> = []
        for (_, listed) in responses {
            var response = listed
            if let reference = listed["$ref"]?.stringValue {
                let name = try #require(reference.split(separator: "/").last.map(String.init))
                response = try #require(document["components"]?["responses"]?[name], "no shared response \(name)")
            }
            let schema = response["content"]?["application/json"]?["schema"]
            let listedCodes = schema?["properties"]?["error"]?["properties"]?["code"]?["enum"]?.arrayValue ?? []
            codes.formUnion(listedCodes.compactMap(\.stringValue))
            // Codes not known in advance: the schema allows any, the description says when (as code "").
            let description = response["description"]?.stringValue ?? ""
            if description.contains("- any other code: ") {
                codes.insert("")
                let named = description.split(separator: "\n").compactMap { line in
                    line.hasPrefix("- `") ? line.dropFirst(3).split(separator: "`").first.map(String.init) : nil
                }
                codes.formUnion(named)
            }
        }
        return codes
    }

    /// Each access mode, with every optional answer switched on and off.
    static var configurations: [OpenAPIDocument.Settings] {
        [SessionAccessMode.Kind.open, .token, .jwt].flatMap { access in
            [false, true].map { on in
                var settings = OpenAPIDocument.Settings()
                settings.access = access
                settings.requestRateLimit = on
                settings.sessionRateLimit = on
                settings.actionByteLimit = on
                settings.memoryOnly = on
                settings.restrictedReactors = on
                return settings
            }
        }
    }
}
