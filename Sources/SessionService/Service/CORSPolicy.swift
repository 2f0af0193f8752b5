/// Which browser origins may call the API (`cors.allowedOrigins`).
struct CORSPolicy: Sendable {
    let origins: Set<String>
    let allowsAny: Bool

    init(allowedOrigins: [String]) {
        origins = Set(allowedOrigins)
        allowsAny = origins.contains("*")
    }

    /// Whether any origin is allowed at all (else requests skip the `Origin` lookup).
    var isEnabled: Bool { !origins.isEmpty }

    func allows(_ origin: String) -> Bool { allowsAny || origins.contains(origin) }
}
