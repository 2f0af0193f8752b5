import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// Where the journal's files lie in the data directory, and reading one whole (all syscalls go
/// through ``Posix``).
enum JournalFiles {
    /// The journal holds whatever clients sent: readable by the server's user only.
    static let fileMode: mode_t = 0o600
    static let directoryMode: mode_t = 0o700

    /// `journal-0000000042.log`: ten digits, so names sort like numbers.
    static func segmentPath(_ directory: String, _ segment: UInt32) -> String {
        let digits = String(segment)
        return directory + "/journal-" + String(repeating: "0", count: max(0, 10 - digits.utf8.count)) + digits + ".log"
    }

    /// The segment numbers present in `directory`, oldest first.
    static func segmentNumbers(_ directory: String) throws(IOError) -> [UInt32] {
        try Posix.listDirectory(directory).compactMap { name -> UInt32? in
            guard name.hasPrefix("journal-"), name.hasSuffix(".log") else { return nil }
            return UInt32(name.dropFirst(8).dropLast(4))
        }.sorted()
    }

    /// Reads `count` bytes at `offset` of an open file; fewer when the file ends first.
    static func read(_ fd: Int32, offset: Int, count: Int, path: String) throws(IOError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        // withUnsafeMutableBytes rethrows untyped; a Result carries the typed error out.
        let read = result.withUnsafeMutableBytes { buffer in
            Result { () throws(IOError) in try Posix.preadFully(fd, buffer, offset: offset) }
        }
        let done: Int
        do { done = try read.get() } catch { throw error.about(path) }
        if done < count { result.removeLast(count - done) }
        return result
    }

    /// The whole file at `path`.
    static func readAll(_ path: String) throws(IOError) -> [UInt8] {
        let fd = try Posix.open(path, O_RDONLY | O_CLOEXEC)
        defer { Posix.close(fd) }
        let size: Int
        do {
            size = try Posix.size(fd)
        } catch {
            throw error.about(path)
        }
        return try read(fd, offset: 0, count: size, path: path)
    }

    /// Takes group and other access away from the data folder and the journal's files (an earlier
    /// version created them 0755 and 0644); returns the paths changed. A file that cannot be changed
    /// (owned by another user) is reported, not fatal.
    static func tightenPermissions(_ directory: String) throws(IOError) -> (changed: [String], failed: [IOError]) {
        var changed: [String] = []
        var failed: [IOError] = []
        let files = try Posix.listDirectory(directory).filter {
            $0 == "LOCK" || ($0.hasPrefix("journal-") && $0.hasSuffix(".log"))
        }
        for (path, mode) in [(directory, directoryMode)] + files.map({ (directory + "/" + $0, fileMode) }) {
            do {
                guard try Posix.permissions(path) & 0o077 != 0 else { continue }
                try Posix.chmod(path, mode)
                changed.append(path)
            } catch {
                failed.append(error)
            }
        }
        return (changed, failed)
    }
}
