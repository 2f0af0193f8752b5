import CLinux
import Logs
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// The crash folder, `<storage.dataDir>/crashes`: the fatal-signal handler writes a record there when a
/// session's reactor code crashes the process (`<session>.<unix nanoseconds>.<thread>.crash`, 0600), and
/// the next start reads them back. A record stays until an operator releases, forks past or deletes its
/// session (see ``CrashRecord``).
///
/// ```swift
/// let folder = try CrashFolder.install(dataDirectory: "data")   // the handler writes here from now on
/// for record in folder.records(logger: logger) { storage.quarantine(record.session, reason: …) }
/// ```
struct CrashFolder: Sendable {
    /// The folder's path.
    let path: String

    /// Creates the folder (0700) in `dataDirectory` and has the handler write there; nil `dataDirectory`
    /// (memory only) installs the handler for its standard-error line alone. The handler is installed
    /// once per process, ahead of the one found (the Swift runtime's backtracer), which still runs.
    @discardableResult
    static func install(dataDirectory: String?, program: String = "reactor-server") throws(IOError) -> CrashFolder? {
        guard let dataDirectory else {
            _ = CLinux_crash_install(nil, program)
            return nil
        }
        let folder = CrashFolder(path: dataDirectory + "/crashes")
        try Posix.makeDirectories(folder.path, mode: 0o700)
        // A record holds what a client sent: readable by the server's user only, whatever made the folder.
        if try Posix.permissions(folder.path) & 0o077 != 0 { try Posix.chmod(folder.path, 0o700) }
        guard CLinux_crash_install(folder.path, program) == 0 else {
            throw IOError(call: "sigaction", errno: errno, path: folder.path)
        }
        return folder
    }

    /// Every record in the folder, oldest first. A record the handler did not finish (its `.tmp` file) is
    /// removed; one that does not read back is left in place and logged, so nothing is lost unnoticed.
    func records(logger: Logger) -> [CrashRecord] {
        let names: [String]
        do {
            names = try Posix.listDirectory(path)
        } catch {
            logger.error(
                "the crash folder cannot be read; sessions that crashed the server are not quarantined",
                ["path": .string(path), "error": .string("\(error)")])
            return []
        }
        var records: [CrashRecord] = []
        for name in names {
            let file = path + "/" + name
            if name.hasSuffix(".crash.tmp") {
                try? Posix.unlink(file)
                continue
            }
            guard name.hasSuffix(".crash") else { continue }
            guard let bytes = try? Self.readAll(file), let record = CrashRecord(json: bytes, origin: file) else {
                logger.error("a crash record does not read back; it is left in place", ["path": .string(file)])
                continue
            }
            records.append(record)
        }
        return records.sorted { $0.at < $1.at }
    }

    /// Deletes the files of `records` (those read from this folder).
    func remove(_ records: [CrashRecord], logger: Logger) {
        for record in records where record.origin.hasPrefix(path + "/") {
            do {
                try Posix.unlink(record.origin)
            } catch {
                logger.error(
                    "a crash record cannot be deleted; its session will be quarantined again at the next start",
                    ["path": .string(record.origin), "error": .string("\(error)")])
            }
        }
        try? Posix.syncDirectory(path)
    }

    /// The whole file at `path`.
    static func readAll(_ path: String) throws(IOError) -> [UInt8] {
        let fd = try Posix.open(path, O_RDONLY | O_CLOEXEC)
        defer { Posix.close(fd) }
        let size = try Posix.size(fd)
        var bytes = [UInt8](repeating: 0, count: size)
        // withUnsafeMutableBytes rethrows untyped; a Result carries the typed error out.
        let read = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(IOError) in try Posix.preadFully(fd, buffer, offset: 0) }
        }
        return Array(bytes.prefix(try read.get()))
    }

    /// Has the handler also put each crash record into a NATS key-value bucket (`subjectPrefix` is
    /// `$KV.<bucket>.`) through one of `servers`, within `timeout`, over a connection of its own (the
    /// process's NATS client cannot run in a signal handler). `connectLine` is the `CONNECT` it sends.
    static func publish(
        to servers: [ResolvedAddress], connectLine: String, subjectPrefix: String, timeout: Duration
    ) -> Bool {
        let count = min(servers.count, Int(CLinux_CRASH_NATS_SERVERS))
        guard count > 0 else {
            CLinux_crash_clear_nats()
            return false
        }
        let addresses = servers.prefix(count).map(\.storage)
        let lengths = servers.prefix(count).map(\.length)
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return CLinux_crash_set_nats(addresses, lengths, Int32(count), connectLine, subjectPrefix, milliseconds) == 0
    }
}
