import Logs
import NATS

// Waiting for a cluster's JetStream: "Server is ready" says a node listens, not that the nodes
// found each other and elected a meta leader. Tests that kill nodes under load wait for that first,
// so a kill hits a formed cluster instead of one still electing.
//
//     let cluster = try await NATSTestCluster.start()
//     try await cluster.waitUntilJetStreamAnswers()            // a meta leader answers $JS.API.INFO
//     try await cluster.nodes[0].kill()
//     try await cluster.restart(cluster.nodes[0])              // back, and answering through itself
extension NATSTestCluster {
    /// Returns once `$JS.API.INFO` is answered through any node of the cluster (through `node` only,
    /// when given): then a meta leader is elected and, for `node`, that node has rejoined it. Fails
    /// after `bound` with the nodes' logs.
    public func waitUntilJetStreamAnswers(through node: NATSServerProcess? = nil, within bound: Duration = .seconds(60))
        async throws
    {
        let servers = node?.url ?? urls
        let what = "JetStream to answer through \(servers)"
        do {
            guard let options = try? NATSOptions(servers: servers) else {
                throw TestFailure("cannot read NATS servers \(servers)")
            }
            let connection = NATSConnection(options: options)
            defer { connection.close() }
            try await waitFor(what, within: bound) {
                try await connection.connect(timeout: bound)
                try await JetStream(connection: connection, timeout: .seconds(2)).waitUntilReady(
                    timeout: bound, logger: .disabled)
            }
        } catch {
            let logs = (node.map { [$0] } ?? nodes).map { "\($0.name):\n\($0.log.suffix(3000))" }.joined(
                separator: "\n")
            throw TestFailure("\(what): \(error); the logs:\n\(logs)")
        }
    }

    /// Starts `node` again (same port, same store) and waits until JetStream answers through it.
    public func restart(_ node: NATSServerProcess, within bound: Duration = .seconds(60)) async throws {
        try await node.restart()
        try await waitUntilJetStreamAnswers(through: node, within: bound)
    }

    /// The name of the node that leads `stream` (its records go through that node first), nil when
    /// the stream has no leader now.
    public func leader(of stream: String, within bound: Duration = .seconds(30)) async throws -> NATSServerProcess? {
        guard let options = try? NATSOptions(servers: urls) else {
            throw TestFailure("cannot read NATS servers \(urls)")
        }
        let connection = NATSConnection(options: options)
        defer { connection.close() }
        let name = try await waitFor("the leader of stream \(stream)", within: bound) { () async throws -> String? in
            try await connection.connect(timeout: bound)
            return try await JetStream(connection: connection, timeout: .seconds(5)).streamInfo(stream)?.leader
        }
        return nodes.first { $0.name == name }
    }
}
