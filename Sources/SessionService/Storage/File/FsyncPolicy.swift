/// When the journal calls fdatasync, and so what survives what (see the README's Durability section).
public enum FsyncPolicy: String, Sendable, CaseIterable {
    /// Before any response or event that depends on a record leaves: survives power loss.
    case always
    /// Every `storage.fsyncWindowMilliseconds`: survives `kill -9`; power loss may lose the last window.
    case batch
    /// Never (the kernel writes back when it likes): survives `kill -9`, not power loss.
    case never
}
