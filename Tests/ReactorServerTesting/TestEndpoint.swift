/// Something a test reaches over HTTP on 127.0.0.1 (a server process, the proxy in front of several),
/// so one check runs against either.
///
/// ```swift
/// func version(of id: String, on endpoint: some TestEndpoint) throws -> Int? {
///     try endpoint.client().request("GET", "/sessions/\(id)").json()["version"] as? Int
/// }
/// ```
public protocol TestEndpoint: Sendable {
    /// The port it listens on.
    var port: Int { get }
}

extension TestEndpoint {
    /// A new connection to it.
    public func client() throws -> TestClient { try TestClient(port: port) }
}

extension ServerProcess: TestEndpoint {}
extension HAProxyProcess: TestEndpoint {}
