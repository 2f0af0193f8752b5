/// The names of what the NATS backend keeps on the cluster, all made from one prefix
/// (`storage.nats.prefix`, `reactor` by default), so several deployments can share a cluster.
struct NATSStorageNames: Sendable, Equatable {
    /// Letters, digits, `-` and `_`: valid in stream, bucket and subject names alike.
    let prefix: String

    /// A prefix of letters, digits, `-` and `_`; why not, otherwise.
    init(prefix: String) throws(NATSStorageError) {
        guard !prefix.isEmpty, prefix.utf8.count <= 32, prefix.utf8.allSatisfy({ $0.isNameCharacter }) else {
            throw NATSStorageError(
                description: "storage.nats.prefix must be 1 to 32 letters, digits, - or _, got \"\(prefix)\"")
        }
        self.prefix = prefix
    }

    /// The stream of every session's records.
    var recordsStream: String { "\(prefix)-records" }
    /// The subjects that stream captures.
    var recordsWildcard: String { "\(prefix).records.*" }
    /// The subject of one session's records (session ids are valid subject tokens).
    func records(_ id: String) -> String { "\(prefix).records.\(id)" }
    /// The subject an instance answers hand-off requests on (instance names are valid subject tokens).
    func handOff(_ instance: String) -> String { "\(prefix).handoff.\(instance)" }
    /// The subject an instance answers forwarded requests on.
    func forward(_ instance: String) -> String { "\(prefix).forward.\(instance)" }
    /// A subject an instance listens on for one relayed subscription.
    func relay(_ instance: String, _ token: String) -> String { "\(prefix).relay.\(instance).\(token)" }
    /// The bucket of session metadata.
    var sessionsBucket: String { "\(prefix)-sessions" }
    /// The bucket of ownership claims.
    var claimsBucket: String { "\(prefix)-claims" }
    /// The bucket of instance heartbeats.
    var instancesBucket: String { "\(prefix)-instances" }
    /// The bucket of crash records, one key per crash: `<session>.<unix nanoseconds>`.
    var crashesBucket: String { "\(prefix)-crashes" }
    /// The stream behind it.
    var crashesStream: String { "KV_\(crashesBucket)" }
    /// What a key of the crashes bucket is put on (the fatal-signal handler publishes there itself).
    var crashSubjectPrefix: String { "$KV.\(crashesBucket)." }
    /// The subjects of one session's crash records.
    func crashes(_ id: String) -> String { "\(crashSubjectPrefix)\(id).*" }
}

extension UInt8 {
    /// `[A-Za-z0-9_-]`.
    var isNameCharacter: Bool {
        (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z"))
            || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z"))
            || (self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9")) || self == UInt8(ascii: "_")
            || self == UInt8(ascii: "-")
    }
}
