#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: which call, on what (a path, when it has one), and the `errno` it set.
public struct IOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, e.g. `"bind"`.
    public var call: String
    /// The `errno` value it reported.
    public var errno: Int32
    /// The file the call was about, for file-system calls (the host name, for name resolution).
    public var path: String?
    /// The failure in words when it is not an `errno` value (a resolver's `gai_strerror`).
    public var reason: String?

    /// An error for `call` failing with `errno`.
    public init(call: String, errno: Int32, path: String? = nil, reason: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
        self.reason = reason
    }

    /// A human-readable form, for logs and error messages: `open(/data/LOCK) failed: Permission denied (errno 13)`.
    public var description: String {
        let subject = path.map { "\(call)(\($0))" } ?? call
        if let reason { return "\(subject) failed: \(reason)" }
        return "\(subject) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }

    /// The same error, naming the file it was about.
    public func about(_ path: String) -> IOError {
        IOError(call: call, errno: errno, path: path, reason: reason)
    }
}
