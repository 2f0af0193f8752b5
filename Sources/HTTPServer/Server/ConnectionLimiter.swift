import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Counts open connections against the server's limits, across all its loops: in all
/// (`maxConnections`) and per client address (`maxConnectionsPerAddress`, addresses in
/// `connectionLimitExemptions` excepted). A connection over a limit is answered `503` and closed;
/// while too many such answers are already in flight, it is closed at once (each holds a
/// descriptor for a moment, and a flood must not turn them into a way to exhaust descriptors).
final class ConnectionLimiter: Sendable {
    /// What an accepted connection counts against, handed back when it closes.
    enum Admission: Sendable, Equatable {
        /// Served; counted in all and, when not exempt, under its address.
        case served(IPAddress?)
        /// Over a limit: answered 503 and closed; counted among the refusals in flight.
        case refused
        /// Over a limit with too many refusals in flight: closed without an answer.
        case dropped
    }

    let maxConnections: Int
    let maxPerAddress: Int?
    let exemptions: [IPAddressRange]
    /// Most refused connections answered at once.
    let maxRefusals: Int

    private let total = Atomic<Int>(0)
    private let refusals = Atomic<Int>(0)
    private let perAddress = Mutex<[IPAddress: Int]>([:])

    init(maxConnections: Int, maxPerAddress: Int?, exemptions: [IPAddressRange], maxRefusals: Int) {
        self.maxConnections = maxConnections
        self.maxPerAddress = maxPerAddress
        self.exemptions = exemptions
        self.maxRefusals = maxRefusals
    }

    /// The limiter for `configuration`: `maxConnections` as configured, or the open-file limit less
    /// a reserve of a tenth (at least 16, at most 1,024 descriptors; never more than half) for files,
    /// outgoing connections and the `503` answers, which may take a quarter of that reserve.
    /// 20,000 descriptors give 18,976 connections.
    convenience init(_ configuration: HTTPServer.Configuration, openFileLimit: Int) {
        let reserve = min(1024, max(16, openFileLimit / 10))
        self.init(
            maxConnections: configuration.maxConnections ?? max(openFileLimit / 2, openFileLimit - reserve, 1),
            maxPerAddress: configuration.maxConnectionsPerAddress,
            exemptions: configuration.connectionLimitExemptions,
            maxRefusals: max(8, reserve / 4))
    }

    /// The process's soft limit on open descriptors (`RLIMIT_NOFILE`).
    static var openFileLimit: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        // RLIM_INFINITY is all ones.
        return limit.rlim_cur == rlim_t.max ? Int(Int32.max) : Int(clamping: limit.rlim_cur)
    }

    /// Connections served now, in all.
    var count: Int { total.load(ordering: .relaxed) }

    /// Decides on a connection just accepted from `address`.
    func admit(_ address: IPAddress?) -> Admission {
        if total.wrappingAdd(1, ordering: .relaxed).newValue > maxConnections {
            total.wrappingSubtract(1, ordering: .relaxed)
            return refusal()
        }
        guard let maxPerAddress, let address, !exemptions.contains(where: { $0.contains(address) }) else {
            return .served(nil)
        }
        let admitted = perAddress.withLock { counts -> Bool in
            let count = counts[address, default: 0]
            guard count < maxPerAddress else { return false }
            counts[address] = count + 1
            return true
        }
        guard admitted else {
            total.wrappingSubtract(1, ordering: .relaxed)
            return refusal()
        }
        return .served(address)
    }

    private func refusal() -> Admission {
        if refusals.wrappingAdd(1, ordering: .relaxed).newValue > maxRefusals {
            refusals.wrappingSubtract(1, ordering: .relaxed)
            return .dropped
        }
        return .refused
    }

    /// Gives back what `admission` counted (the connection closed).
    func release(_ admission: Admission) {
        switch admission {
        case .served(let address):
            total.wrappingSubtract(1, ordering: .relaxed)
            guard let address else { return }
            perAddress.withLock { counts in
                let count = counts[address, default: 1] - 1
                counts[address] = count == 0 ? nil : count
            }
        case .refused:
            refusals.wrappingSubtract(1, ordering: .relaxed)
        case .dropped:
            break
        }
    }
}
