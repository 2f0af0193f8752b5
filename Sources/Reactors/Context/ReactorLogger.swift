/// A logger a reactor writes to through its ``ReactorContext``: the host adds the session's id to every
/// line (the server writes them to its log with `"session"`), so the reactor passes only what happened.
///
/// ```swift
/// context.logger.info("user service answered", ["userID": "\(userID)", "following": "\(following)"])
/// ```
public struct ReactorLogger: Sendable {
    /// How much a line matters, as the server's log levels.
    public enum Level: String, Sendable, CaseIterable {
        case debug, info, notice, warning, error
    }

    private let write: @Sendable (Level, String, [String: String]) -> Void

    /// A logger that hands every line to `write`.
    public init(_ write: @escaping @Sendable (_ level: Level, _ message: String, _ fields: [String: String]) -> Void) {
        self.write = write
    }

    /// Writes a line at `level`.
    public func log(_ level: Level, _ message: String, _ fields: [String: String] = [:]) {
        write(level, message, fields)
    }
    /// Writes a line at `debug`.
    public func debug(_ message: String, _ fields: [String: String] = [:]) { write(.debug, message, fields) }
    /// Writes a line at `info`.
    public func info(_ message: String, _ fields: [String: String] = [:]) { write(.info, message, fields) }
    /// Writes a line at `notice`.
    public func notice(_ message: String, _ fields: [String: String] = [:]) { write(.notice, message, fields) }
    /// Writes a line at `warning`.
    public func warning(_ message: String, _ fields: [String: String] = [:]) { write(.warning, message, fields) }
    /// Writes a line at `error`.
    public func error(_ message: String, _ fields: [String: String] = [:]) { write(.error, message, fields) }

    /// Drops every line.
    public static let discarding = ReactorLogger { _, _, _ in }
    /// Prints every line to standard output (a reactor run outside a server).
    public static let printing = ReactorLogger { level, message, fields in
        let rest = fields.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        print("[\(level.rawValue)] \(message)\(rest)")
    }
}
