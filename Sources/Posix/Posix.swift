import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// The outcome of a non-blocking system call: done with a value, or it would have blocked.
public enum IOResult<T> {
    case processed(T)
    case wouldBlock
}

/// Every system call the server makes goes through here, for sockets and files alike: the one place
/// that retries `EINTR`, turns `EAGAIN` into `.wouldBlock` and everything else into an ``IOError``
/// naming the call. `EBADF` and `EFAULT` are bugs in the caller, not conditions: they stop the process.
///
/// ```swift
/// let fd = try Posix.open(path, O_RDONLY | O_CLOEXEC)
/// defer { Posix.close(fd) }
/// let count = try Posix.pread(fd, buffer, offset: 0)
/// ```
public enum Posix {
    /// Runs `body` until it stops failing with `EINTR`; `-1` results become `.wouldBlock` or an `IOError`.
    @inlinable @inline(__always)
    public static func syscall<T: FixedWidthInteger>(_ name: StaticString, _ body: () -> T) throws(IOError) -> IOResult<
        T
    > {
        while true {
            let result = body()
            if result != -1 { return .processed(result) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN: return .wouldBlock
            case EBADF, EFAULT:
                // A closed or bogus descriptor/pointer is a bug in this server, not a runtime condition.
                preconditionFailure("\(name) failed with errno \(code): programming error")
            default: throw IOError(call: "\(name)", errno: code)
            }
        }
    }

    /// Like `syscall`, for calls that never legitimately block (bind, listen, setsockopt, file I/O…).
    @inlinable @inline(__always)
    public static func blocking<T: FixedWidthInteger>(_ name: StaticString, _ body: () -> T) throws(IOError) -> T {
        switch try syscall(name, body) {
        case .processed(let value): return value
        case .wouldBlock: throw IOError(call: "\(name)", errno: EAGAIN)
        }
    }

    /// Closes `fd`; errors other than `EBADF` are meaningless after close on Linux and are ignored.
    @inlinable
    public static func close(_ fd: Int32) {
        let result = Glibc.close(fd)
        precondition(result == 0 || errno != EBADF, "close(\(fd)) of a descriptor that was not open")
    }

    // MARK: Sockets

    /// `read(2)` into `buffer`; `.processed(0)` is end of stream.
    @inlinable
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// `writev(2)` without `SIGPIPE` (via `sendmsg` with `MSG_NOSIGNAL`).
    @inlinable
    public static func writev(_ fd: Int32, _ iov: UnsafePointer<iovec>, _ count: Int32) throws(IOError) -> IOResult<Int>
    {
        try syscall("writev") { CLinux_writev_nosignal(fd, iov, count) }
    }

    /// `send(2)` without `SIGPIPE`.
    @inlinable
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, CLinux_MSG_NOSIGNAL) }
    }

    /// `accept4(2)` with the new descriptor non-blocking and close-on-exec.
    @inlinable
    public static func accept4(_ fd: Int32, _ address: inout sockaddr_storage) throws(IOError) -> IOResult<Int32> {
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return try syscall("accept4") {
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    CLinux_accept4(fd, $0, &length, CLinux_SOCK_NONBLOCK | CLinux_SOCK_CLOEXEC)
                }
            }
        }
    }

    /// Sets an integer socket option.
    @inlinable
    public static func setsockopt(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(IOError) {
        var value = value
        _ = try blocking("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// `eventfd(2)`, non-blocking and close-on-exec.
    public static func eventfd() throws(IOError) -> Int32 {
        try blocking("eventfd") { CLinux_eventfd(0, CLinux_EFD_NONBLOCK | CLinux_EFD_CLOEXEC) }
    }

    /// Adds one to an eventfd counter, waking whoever polls it.
    @inlinable
    public static func signal(eventfd fd: Int32) {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated: the reader is already due to wake.
        _ = try? syscall("write") { Glibc.write(fd, &one, 8) }
    }

    /// Resets an eventfd counter.
    @inlinable
    public static func drain(eventfd fd: Int32) {
        var value: UInt64 = 0
        _ = try? syscall("read") { Glibc.read(fd, &value, 8) }
    }

    // MARK: Files

    /// `open(2)`; `mode` applies when `O_CREAT` creates the file. Errors name `path`.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(IOError) -> Int32 {
        do {
            return try blocking("open") { Glibc.open(path, flags, mode) }
        } catch {
            throw error.about(path)
        }
    }

    /// Writes all of `bytes` at the file's offset (or its end, with `O_APPEND`), retrying short writes.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IOError) {
        var offset = 0
        while offset < bytes.count {
            offset += try blocking("write") { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
        }
    }

    /// Writes all of `bytes` at `offset`, retrying short writes.
    public static func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, offset: Int) throws(IOError) {
        var done = 0
        while done < bytes.count {
            done += try blocking("pwrite") {
                Glibc.pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            }
        }
    }

    /// Reads into `buffer` from `offset` until it is full or the file ends; returns how many bytes were read.
    public static func preadFully(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, offset: Int) throws(IOError)
        -> Int
    {
        var done = 0
        while done < buffer.count {
            let got = try blocking("pread") {
                Glibc.pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// `fdatasync(2)`: the file's data (and the metadata needed to read it) reach the disk.
    public static func fdatasync(_ fd: Int32) throws(IOError) {
        _ = try blocking("fdatasync") { Glibc.fdatasync(fd) }
    }

    /// `fsync(2)`.
    public static func fsync(_ fd: Int32) throws(IOError) {
        _ = try blocking("fsync") { Glibc.fsync(fd) }
    }

    /// `ftruncate(2)`.
    public static func ftruncate(_ fd: Int32, _ length: Int) throws(IOError) {
        _ = try blocking("ftruncate") { Glibc.ftruncate(fd, off_t(length)) }
    }

    /// `flock(2)` with `LOCK_NB`: false when another process holds the lock.
    public static func tryLock(_ fd: Int32, exclusive: Bool = true) throws(IOError) -> Bool {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB
        switch try syscall("flock", { () -> Int32 in flock(fd, operation) }) {
        case .processed: return true
        case .wouldBlock: return false
        }
    }

    /// The size of an open file in bytes.
    public static func size(_ fd: Int32) throws(IOError) -> Int {
        var info = stat()
        _ = try blocking("fstat") { Glibc.fstat(fd, &info) }
        return Int(info.st_size)
    }

    /// `dup(2)` with close-on-exec.
    public static func dup(_ fd: Int32) throws(IOError) -> Int32 {
        try blocking("fcntl(F_DUPFD_CLOEXEC)") { Glibc.fcntl(fd, F_DUPFD_CLOEXEC, 0) }
    }

    /// The permission bits of the file at `path` (`stat(2)`).
    public static func permissions(_ path: String) throws(IOError) -> mode_t {
        var info = stat()
        do {
            _ = try blocking("stat") { Glibc.fstatat(AT_FDCWD, path, &info, 0) }
        } catch {
            throw error.about(path)
        }
        return info.st_mode & 0o7777
    }

    /// `chmod(2)`.
    public static func chmod(_ path: String, _ mode: mode_t) throws(IOError) {
        do {
            _ = try blocking("chmod") { Glibc.chmod(path, mode) }
        } catch {
            throw error.about(path)
        }
    }

    /// `unlink(2)`; a file already gone is not an error.
    public static func unlink(_ path: String) throws(IOError) {
        guard Glibc.unlink(path) != 0 else { return }
        let code = errno
        guard code != ENOENT else { return }
        throw IOError(call: "unlink", errno: code, path: path)
    }

    /// `rename(2)`.
    public static func rename(_ from: String, to: String) throws(IOError) {
        do {
            _ = try blocking("rename") { Glibc.rename(from, to) }
        } catch {
            throw error.about("\(from) → \(to)")
        }
    }

    /// `mkdir -p` with `mode` for the folders it creates.
    public static func makeDirectories(_ path: String, mode: mode_t = 0o700) throws(IOError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if Glibc.mkdir(partial, mode) != 0 {
                let code = errno
                if code != EEXIST { throw IOError(call: "mkdir", errno: code, path: partial) }
            }
        }
    }

    /// Makes a folder's entries (files created, renamed or removed in it) durable.
    public static func syncDirectory(_ path: String) throws(IOError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(fd) }
        do {
            try fsync(fd)
        } catch {
            throw error.about(path)
        }
    }

    /// The names in a folder, without `.` and `..`.
    public static func listDirectory(_ path: String) throws(IOError) -> [String] {
        guard let directory = Glibc.opendir(path) else { throw IOError(call: "opendir", errno: errno, path: path) }
        defer { Glibc.closedir(directory) }
        var names: [String] = []
        while let entry = Glibc.readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
