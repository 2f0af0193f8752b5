/// Defects of nats-server releases that weaken what the NATS backend relies on, said at start so an operator
/// knows what to upgrade.
enum NATSServerIssues {
    /// Whether nats-server `version` (`2.9.10`, `v2.10.4`, `2.11.0-beta.2`) can accept two publishes to a clustered
    /// stream that expect the same last subject sequence (a key-value compare-and-set included): it checked the
    /// expectation before the Raft proposal, with no note of proposals in flight (nats-server#4320, fixed in 2.9.21
    /// by nats-server#4319). False for later releases and for a version it cannot read.
    static func acceptsConcurrentExpectedSequences(version: String) -> Bool {
        let numbers = version.drop { $0 == "v" }.split(separator: ".").prefix(3).map { part in
            Int(part.prefix { $0.isNumber }) ?? -1
        }
        guard numbers.count == 3, numbers.allSatisfy({ $0 >= 0 }) else { return false }
        return numbers[0] == 2 && (numbers[1] < 9 || (numbers[1] == 9 && numbers[2] < 21))
    }

    /// The start-up warning for nats-server `version` whose streams keep `replicas` copies; nil when the release
    /// is not known to be affected, or nothing is replicated (one server checks under its stream's lock).
    static func concurrentExpectedSequencesWarning(version: String, replicas: Int) -> String? {
        guard replicas > 1, acceptsConcurrentExpectedSequences(version: version) else { return nil }
        return "nats-server \(version) can accept two writes that expect the same last subject sequence in a "
            + "clustered stream (nats-server#4320, fixed in 2.9.21): two instances loading one session at once may "
            + "both see their claim and their fence accepted. This server reads each claim back after writing it "
            + "and checks that its fence is the first write after what it read, refusing the load otherwise (503, "
            + "the next request tries again); upgrade the NATS servers to 2.9.21 or later to close the gap"
    }
}
