/// The storage backends a server can be configured with (`storage.backend`).
public enum StorageKind: String, Sendable, CaseIterable {
    /// `FileJournal`: an append-only journal in a folder on this machine (`storage.dataDir`).
    case file
    /// `NATSStorage`: a NATS JetStream cluster that several instances share (`storage.nats.*`).
    case nats
}
