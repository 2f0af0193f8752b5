import JSONCodec
import NATS

// Every action publishes to the records stream, and only its leader stores: a connection to another node sends
// each publish and its acknowledgement across a cluster route, which costs the nodes CPU and the action latency.
extension NATSStorage {
    /// Asks the connection to prefer the records stream's leader, now and after every reconnect (a lost node may
    /// have been the leader). Nothing moves when it is on the leader already, nor twice for the same leader.
    func followRecordsLeader() {
        connection.observeStatus { [weak self] status in
            guard case .connected = status, let self else { return }
            noteServerVersion()
            preferRecordsLeader()
        }
        noteServerVersion()
        preferRecordsLeader()
    }

    /// Whether batches need `Nats-Msg-Id` on the server now connected to (``NATSSessionLog/batchHeader``).
    func noteServerVersion() {
        let version = connection.serverInfo.version
        let affected =
            options.replicas > 1 && NATSServerIssues.acceptsConcurrentExpectedSequences(version: version)
        messageIDs.carriedByBatches.store(affected, ordering: .relaxed)
    }

    /// Reads the records stream's leader (`STREAM.INFO`) and makes it the connection's preferred server.
    func preferRecordsLeader() {
        let connection = self.connection
        let logger = self.logger
        let stream = names.recordsStream
        do throws(NATSError) {
            try jetStream.request("STREAM.INFO.\(stream)", body: nil) { result in
                guard case .success(let info) = result, let leader = info["cluster"]?["leader"]?.stringValue,
                    !leader.isEmpty, leader != connection.preferredServer
                else { return }
                if connection.serverInfo.serverName != leader {
                    logger.info(
                        "moving the NATS connection to the records stream's leader",
                        ["stream": .string(stream), "leader": .string(leader)])
                }
                connection.prefer(serverNamed: leader)
            }
        } catch {
            logger.info("cannot ask for the records stream's leader", ["error": .string(error.description)])
        }
    }
}
