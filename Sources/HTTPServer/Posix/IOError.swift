#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, and the `errno` it set.
public struct IOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, e.g. `"bind"`.
    public var call: String
    /// The `errno` value it reported.
    public var errno: Int32

    /// An error for `call` failing with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// A human-readable form, for logs and error messages.
    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
