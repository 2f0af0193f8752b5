import Posix

/// Why the journal could not do something. A failed system call (`io`) may pass (descriptors run
/// out, a disk fills up): it is never a reason to give up on a session. A record that is not what its
/// frame or the index says (`corrupt`) does not heal: its session is quarantined.
public enum JournalError: Error, Sendable, CustomStringConvertible {
    /// A system call failed; the error names the call, the file and errno.
    case io(IOError)
    /// Another process holds the data directory's lock file.
    case locked(directory: String, lockFile: String)
    /// The bytes at `offset` of `path` are not the record they should be.
    case corrupt(path: String, offset: Int, reason: String)

    public var description: String {
        switch self {
        case .io(let error):
            return error.description
        case .locked(let directory, let lockFile):
            return
                "another reactor-server holds the data directory \(directory) (\(lockFile) is locked); "
                + "use a different --data-dir or stop the other process"
        case .corrupt(let path, let offset, let reason):
            return "the journal record at \(path) offset \(offset) \(reason)"
        }
    }
}
