#if canImport(Glibc)
import Glibc
#endif

/// A failed file-system call, naming the call, the path and errno.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ call: String, _ path: String, errno code: Int32 = errno) {
        description = "\(call)(\(path)): \(String(cString: strerror(code))) (errno \(code))"
    }

    init(message: String) { description = message }
}

/// The journal's only syscalls: open, write, pread, fdatasync, ftruncate, unlink, readdir.
enum StorageFiles {
    static func makeDirectory(_ path: String) throws(StorageError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o755) != 0, errno != EEXIST { throw StorageError("mkdir", partial) }
        }
    }

    static func openForAppend(_ path: String) throws(StorageError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StorageError("open", path) }
        return fd
    }

    static func openForReading(_ path: String) throws(StorageError) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError("open", path) }
        return fd
    }

    /// Writes all of `bytes`, retrying short writes and EINTR.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws(StorageError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw StorageError("write", path(), errno: code)
            }
            offset += written
        }
    }

    static func sync(_ fd: Int32, path: @autoclosure () -> String) throws(StorageError) {
        while fdatasync(fd) != 0 {
            let code = errno
            if code == EINTR { continue }
            throw StorageError("fdatasync", path(), errno: code)
        }
    }

    /// Makes a directory entry (a new or removed segment) durable.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Reads `count` bytes at `offset`; fewer at the end of the file.
    static func read(_ fd: Int32, offset: Int, count: Int, path: String) throws(StorageError) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var done = 0
        var failure: Int32 = 0
        result.withUnsafeMutableBytes { buffer in
            while done < count {
                let got = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                done += got
            }
        }
        if failure != 0 { throw StorageError("pread", path, errno: failure) }
        if done < count { result.removeLast(count - done) }
        return result
    }

    static func size(_ fd: Int32) -> Int {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
    }

    static func truncate(_ path: String, to length: Int) throws(StorageError) {
        guard Glibc.truncate(path, off_t(length)) == 0 else { throw StorageError("truncate", path) }
    }

    static func remove(_ path: String) throws(StorageError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw StorageError("unlink", path) }
    }

    /// Names in a directory.
    static func list(_ path: String) throws(StorageError) -> [String] {
        guard let directory = opendir(path) else { throw StorageError("opendir", path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
