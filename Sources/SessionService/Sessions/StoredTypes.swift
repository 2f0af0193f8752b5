import JSONCodec
import Reactors

/// How a stored session read back: as stored, or only after a migration (see ``StoredTypes``).
@usableFromInline
struct LoadReport: Sendable, Equatable {
    /// Records (the snapshot and state records) an earlier version of the reactor wrote, migrated.
    var migratedRecords = 0
    /// State members the stored data lacked, taken from the initial state (`team.color`).
    var filledMembers: Set<String> = []
    /// The highest storage version of a record newer than the reactor's own (a rollback), 0 when none.
    var newerVersion = 0

    /// Whether anything had to be made of the data besides decoding it as it is.
    var isMigrated: Bool { migratedRecords > 0 || !filledMembers.isEmpty }

    /// What was made of the data, for the `verify` listing (`2 records from version 1; filled away`).
    var summary: String {
        var parts: [String] = []
        if migratedRecords > 0 { parts.append("\(migratedRecords) records migrated") }
        if !filledMembers.isEmpty {
            parts.append("\(filledMembers.sorted().joined(separator: ", ")) from initialState")
        }
        if newerVersion > 0 { parts.append("records of the newer version \(newerVersion) read as they are") }
        return parts.joined(separator: "; ")
    }
}

/// Reads what a reactor stored, by whichever version of it wrote it: a record of an earlier storage
/// version goes through the reactor's `migrate` hooks; a state's members the data lacks come from the
/// initial state; a record of a later version (a rollback) is decoded as it is. Used when a session is
/// loaded, replayed for time travel or a fork, and checked by `verify`; never on the path of live actions.
@usableFromInline
struct StoredTypes<R: Reactor> {
    let reactor: R
    let name: String
    /// The initial state's JSON: where members missing from stored states come from.
    let template: JSONValue
    let decoder = JSONValueDecoder.stored
    /// What was made of the records read so far.
    var report = LoadReport()

    @usableFromInline
    init(reactor: R, name: String, template: JSONValue) {
        self.reactor = reactor
        self.name = name
        self.template = template
    }

    /// A stored state (a snapshot's or a forced one) as today's `State`.
    mutating func state(_ json: [UInt8], storageVersion: Int) throws -> R.State {
        let value = try decoder.parser.parse(json)
        if storageVersion < R.storageVersion {
            var migrating = decoder
            migrating.userInfo[.storedMigration] = StoredMigration(reactor: reactor, version: storageVersion)
            if let migrated = try migrating.decode(MigratedState<R>.self, from: value).state {
                report.migratedRecords += 1
                return migrated
            }
        }
        note(storageVersion)
        let read = try decoder.decode(R.State.self, from: value, missingFrom: template)
        report.filledMembers.formUnion(read.filled)
        return read.value
    }

    /// A stored mutation as today's mutations (one, unless a migration made it more or none).
    mutating func mutations(_ json: [UInt8], storageVersion: Int) throws -> [R.Mutation] {
        let value = try decoder.parser.parse(json)
        if storageVersion < R.storageVersion {
            var migrating = decoder
            migrating.userInfo[.storedMigration] = StoredMigration(reactor: reactor, version: storageVersion)
            if let migrated = try migrating.decode(MigratedMutations<R>.self, from: value).mutations {
                report.migratedRecords += 1
                return migrated
            }
        }
        note(storageVersion)
        return [try decoder.decode(R.Mutation.self, from: value)]
    }

    /// Counts a record decoded as today's types though another version wrote it.
    private mutating func note(_ storageVersion: Int) {
        if storageVersion > R.storageVersion {
            report.newerVersion = max(report.newerVersion, storageVersion)
        } else if storageVersion < R.storageVersion {
            report.migratedRecords += 1
        }
    }

    /// `state` after one stored record: mutations reduced, or a forced state (whose pulses count as
    /// assigned, as the runtime counts them).
    mutating func replay(_ record: StoredState, onto state: R.State) throws -> R.State {
        switch record.kind {
        case .mutation:
            var state = state
            for mutation in try mutations(record.json, storageVersion: record.storageVersion) {
                state = reactor.reduce(state: state, mutation: mutation)
            }
            return state
        case .forced:
            var forced = try self.state(record.json, storageVersion: record.storageVersion)
            Pulses.force(&forced, replacing: state)
            return forced
        }
    }

    /// Decodes (and migrates) one stored record without running `reduce`.
    mutating func decode(_ record: StoredState) throws {
        switch record.kind {
        case .mutation: _ = try mutations(record.json, storageVersion: record.storageVersion)
        case .forced: _ = try state(record.json, storageVersion: record.storageVersion)
        }
    }

    /// Why a record cannot be read, naming the versions when they differ.
    func reason(_ what: String, storageVersion: Int, _ error: any Error) -> String {
        var text = "\(what) does not decode with reactor \(JSONWriter.quoted(name))"
        if storageVersion < R.storageVersion {
            text += " (written by its storage version \(storageVersion), migrated to \(R.storageVersion))"
        } else if storageVersion > R.storageVersion {
            text += " (written by its storage version \(storageVersion), newer than this server's \(R.storageVersion))"
        }
        return text + ": \(error)"
    }
}

extension CodingUserInfoKey {
    /// Where a migration's decoder finds the reactor and the version that wrote the data.
    static let storedMigration = CodingUserInfoKey(rawValue: "reactor-server.storedMigration")!
}

/// What a migration's `Decodable` shims need: the reactor and the storage version of the data.
struct StoredMigration<R: Reactor>: Sendable {
    let reactor: R
    let version: Int

    /// The one the decoder carries; an error if it carries none (never, as ``StoredTypes`` decodes).
    static func from(_ decoder: any Decoder) throws -> Self {
        guard let migration = decoder.userInfo[.storedMigration] as? Self else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no migration to run"))
        }
        return migration
    }
}

/// Hands the decoder of a stored state to the reactor's `migrate(state:from:)`.
struct MigratedState<R: Reactor>: Decodable {
    let state: R.State?

    init(from decoder: any Decoder) throws {
        let migration = try StoredMigration<R>.from(decoder)
        state = try migration.reactor.migrate(state: decoder, from: migration.version)
    }
}

/// Hands the decoder of a stored mutation to the reactor's `migrate(mutation:from:)`.
struct MigratedMutations<R: Reactor>: Decodable {
    let mutations: [R.Mutation]?

    init(from decoder: any Decoder) throws {
        let migration = try StoredMigration<R>.from(decoder)
        mutations = try migration.reactor.migrate(mutation: decoder, from: migration.version)
    }
}
