import Foundation
import JSONCodec
import Logs
import Reactors

/// What the fatal-signal handler wrote when a session's reactor code crashed the process (see
/// `Sources/CLinux/crash.c`): one JSON object,
/// `{"session","reactor","phase","seq","version","signal","at","pid","thread","actionBytes","action64"}`.
/// Read back at the next start, it quarantines its session, names the crash in every answer, and lists
/// the action that was running in the session's action log.
struct CrashRecord: Sendable, Equatable {
    var session: String
    var reactor: String
    /// What ran: a ``ReactorCall`` name (`reduce`, `replay`, …).
    var phase: String
    /// The action's seq, 0 when none.
    var seq: UInt64
    /// The version made or shown, 0 when none.
    var version: UInt64
    /// `SIGILL`, `SIGSEGV`, …
    var signal: String
    /// When, in nanoseconds since the Unix epoch.
    var at: Int64
    /// The action that was running, as the server had it (its JSON, or the body being decoded); nil when
    /// the crashing thread did not hold it, or it was larger than a record keeps.
    var action: [UInt8]?
    /// Where it came from: a file of the crash folder, or a key of the cluster's crashes bucket.
    var origin: String = ""

    /// A record read back; nil when `json` is not one.
    init?(json: [UInt8], origin: String = "") {
        guard let value = try? JSONParser(maxDepth: 4, maxBytes: 1 << 20).parse(json),
            let session = value["session"]?.stringValue, Self.isName(session),
            let reactor = value["reactor"]?.stringValue, let phase = value["phase"]?.stringValue,
            let seq = value["seq"]?.numberValue?.uint64Value, let version = value["version"]?.numberValue?.uint64Value,
            let signal = value["signal"]?.stringValue, let at = value["at"]?.numberValue?.uint64Value
        else { return nil }
        self.session = session
        self.reactor = reactor
        self.phase = phase
        self.seq = seq
        self.version = version
        self.signal = signal
        self.at = Int64(clamping: at)
        self.origin = origin
        action = value["action64"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { Array($0) }
    }

    /// A record made here (tests, and a crash found by a take-over rather than by its handler).
    init(
        session: String, reactor: String, phase: String, seq: UInt64, version: UInt64, signal: String, at: Int64,
        action: [UInt8]? = nil
    ) {
        self.session = session
        self.reactor = reactor
        self.phase = phase
        self.seq = seq
        self.version = version
        self.signal = signal
        self.at = at
        self.action = action
    }

    /// Whether `text` is a session id as the handler writes one: `[A-Za-z0-9_-]{1,64}`.
    static func isName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
    }

    /// The record as the handler writes it (what the cluster's crashes bucket holds).
    var json: [UInt8] {
        var members: [(String, JSONValue)] = [
            ("session", .string(session)), ("reactor", .string(reactor)), ("phase", .string(phase)),
            ("seq", .number(JSONNumber.uint(seq))), ("version", .number(JSONNumber.uint(version))),
            ("signal", .string(signal)),
            ("at", .number(JSONNumber.int(at))),
        ]
        if let action {
            members.append(("actionBytes", .number(JSONNumber.int(Int64(action.count)))))
            members.append(("action64", .string(Data(action).base64EncodedString())))
        }
        return JSONValue.object(JSONObject(members)).serialized()
    }

    /// The call that crashed, when the phase is one this server knows.
    var call: ReactorCall? { ReactorCall.allCases.first { "\($0)" == phase } }

    /// What ran, for people: "reduce making version 4 for action seq 3".
    var what: String {
        let action = seq > 0 ? "action seq \(seq)" : "an action"
        switch call {
        case .decodeAction?: return "decoding \(seq > 0 ? action : "a posted action")"
        case .transformAction?: return "transform(action:) of \(action)"
        case .mutate?: return "mutate of \(action)"
        case .transformMutation?: return "transform(mutation:) for \(action)"
        case .reduce?: return "reduce making version \(version)" + (seq > 0 ? " for \(action)" : "")
        case .transformState?: return "transform(state:) of version \(version)"
        case .effect?: return "an effect of \(action)"
        case .source?: return "a merged source of transform(action:) or transform(mutation:)"
        case .encodeState?: return "encoding the state of version \(version)"
        case .encodeMutation?: return "encoding the mutation of version \(version)"
        case .encodeAction?: return "encoding \(action) for the action log"
        case .replay?: return "replaying its stored version \(version) at load"
        case .decodeState?: return "decoding its stored state of version \(version) at load"
        case .recover?: return "recover(interrupted:state:) of interrupted \(action) at load"
        case .middleware?:
            return "a middleware of the reactor" + (seq > 0 ? " for \(action)" : "")
                + (version > 0 ? " at version \(version)" : "")
        case nil: return "\(phase) (seq \(seq), version \(version))"
        }
    }

    /// When, in RFC 3339 (UTC).
    var when: String { JSONLineLogHandler.rfc3339(Double(at) / 1e9) }

    /// The newest version that rebuilds without running into this crash: the one before the version the
    /// crash was making or replaying, or (a crash in an action's code, which makes no version) the
    /// stored one.
    func lastGoodVersion(stored: UInt64) -> UInt64 {
        switch call {
        case .reduce?, .transformMutation?, .transformState?, .encodeState?, .encodeMutation?, .replay?, .decodeState?:
            return min(stored, version > 0 ? version - 1 : 0)
        default:
            return stored
        }
    }
}

extension [CrashRecord] {
    /// Why their session is quarantined, naming the latest crash: what ran, the seq or version, the signal
    /// and when; and what an operator can do.
    func quarantineReason(id: String) -> String {
        guard let latest = self.max(by: { $0.at < $1.at }) else { return "" }
        let earlier = count > 1 ? " (after \(count - 1) earlier \(count == 2 ? "crash" : "crashes"))" : ""
        let reactor = JSONWriter.quoted(latest.reactor)
        return "its reactor \(reactor) crashed the server with \(latest.signal) at \(latest.when) "
            + "in \(latest.what)\(earlier), "
            + "so it is quarantined: POST /admin/sessions/\(id)/release once a fixed reactor is deployed, "
            + "or fork it at an earlier version"
    }

    /// The newest version a fork or time travel may rebuild: below every crash's.
    func lastGoodVersion(stored: UInt64) -> UInt64 {
        reduce(stored) { Swift.min($0, $1.lastGoodVersion(stored: stored)) }
    }
}
