#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on what (a path, when it has one), and the `errno` it set.
public struct IOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, e.g. `"bind"`.
    public var call: String
    /// The `errno` value it reported.
    public var errno: Int32
    /// The file the call was about, for file-system calls.
    public var path: String?

    /// An error for `call` failing with `errno`.
    public init(call: String, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// A human-readable form, for logs and error messages: `open(/data/LOCK) failed: Permission denied (errno 13)`.
    public var description: String {
        let subject = path.map { "\(call)(\($0))" } ?? call
        return "\(subject) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// The same error, naming the file it was about.
    public func about(_ path: String) -> IOError {
        IOError(call: call, errno: errno, path: path)
    }
}
