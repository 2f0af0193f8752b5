/// The record kinds of both storage formats in one table: the file journal's records (``JournalRecord``)
/// and the NATS stream's frames (``RecordFrame``) carry the same kind byte, with the same meaning and
/// payload (``StoredSnapshot``, ``StoredAccept``, ``StoredActionLog``, ``TimerChange``). A kind is only
/// valid in the formats its ``formats`` names: each format's reader takes any other byte for damage.
/// The raw values are on disk and on streams; never renumber one.
enum RecordKind: UInt8, Sendable {
    /// The whole session at a version: id, reactor, state, last seq, stub flag and unfinished actions
    /// (not the action log: that is rebuilt from accept records). Both formats.
    case snapshot = 1
    /// A reduced mutation (JSON) producing version `number`. Both formats.
    case mutation = 2
    /// A state forced in stub mode (JSON) as version `number`. Both formats.
    case forced = 3
    /// An accepted action `number`: when, flags, the body as sent. Both formats.
    case accept = 4
    /// Every mutation of action `number` has been reduced. Both formats.
    case complete = 5
    /// The session was deleted; its earlier records are dead. File only (a stream deletes its subject).
    case delete = 6
    /// The retained action log up to seq `number` in one record, as earlier versions of the file journal
    /// wrote it (read, never written: a log can be larger than a record). File only.
    case actionLog = 7
    /// The first chunk of an action-log checkpoint (compaction), so the accept records it covers need
    /// not be kept: entries oldest first, the last with seq `number`. Both formats.
    case actionLogFirst = 8
    /// A further chunk of the checkpoint this session's latest `actionLogFirst` began. Both formats.
    case actionLogNext = 9
    /// Completes that checkpoint, covering every retained entry up to seq `number`. Chunks without it
    /// (the writer stopped while writing them) count for nothing. Both formats.
    case actionLogEnd = 10
    /// A deleted session's record, overwritten in place: same length, zero key, number and payload.
    /// File only.
    case padding = 11
    /// The hash of the session's access token (`auth.sessions=token`) as its stored text, 64 hexadecimal
    /// digits; the latest replaces earlier ones. `number` is 0. File only (a stream keeps it in the
    /// session's metadata).
    case accessToken = 12
    /// A change of the session's timers (``TimerChange``); `number` is the session's timer serial, which
    /// tells a compaction copy from a new record. The next snapshot holds the timers, like the actions.
    /// Both formats.
    case timer = 13
    /// A new owner's first record (``FenceRecord``): from here on only it appends. Stream only.
    case fence = 100

    /// The storage formats a record kind can appear in.
    struct Formats: OptionSet, Sendable {
        let rawValue: UInt8
        /// The file journal's segments.
        static let file = Formats(rawValue: 1)
        /// A session's subject of the NATS stream.
        static let stream = Formats(rawValue: 2)
    }

    /// The formats whose writers produce this kind (``actionLog``: whose readers still accept it).
    var formats: Formats {
        switch self {
        case .snapshot, .mutation, .forced, .accept, .complete, .actionLogFirst, .actionLogNext, .actionLogEnd,
            .timer:
            [.file, .stream]
        case .delete, .actionLog, .padding, .accessToken: .file
        case .fence: .stream
        }
    }

    /// The kind a byte names in `format`; nil when it names none there.
    init?(_ byte: UInt8, in format: Formats) {
        guard let kind = RecordKind(rawValue: byte), kind.formats.contains(format) else { return nil }
        self = kind
    }

    /// Records of the action log (positional), as opposed to state records (by version).
    var isAction: Bool { self == .accept || self == .complete || self == .timer }

    /// Whether what clients see depends on it: an accepted action or a new state. A record of another
    /// kind (a snapshot, an action-log copy, a completion, a fence) only repeats or summarizes what such
    /// records already hold.
    var isShown: Bool { self == .accept || self == .mutation || self == .forced }
}
