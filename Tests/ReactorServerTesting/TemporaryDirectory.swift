import Foundation

/// Runs `body` with a fresh, empty folder under the system's temporary directory and removes the
/// folder afterwards, however `body` ends (returned, threw, or a `#require` stopped it).
///
/// ```swift
/// try await withTemporaryDirectory("crash") { directory in
///     let server = try await ServerProcess.start(arguments: ["--data-dir", directory])
///     …
/// }
/// ```
public func withTemporaryDirectory<T>(_ label: String = "test", _ body: (String) async throws -> T) async throws -> T {
    let directory = try makeTemporaryDirectory(label)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try await body(directory)
}

/// The same for a test that does not await: a fresh folder for `body`, removed afterwards.
public func withTemporaryDirectory<T>(_ label: String = "test", _ body: (String) throws -> T) throws -> T {
    let directory = try makeTemporaryDirectory(label)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory)
}

/// Creates `<tmp>/<label>-<random>` and returns its path.
private func makeTemporaryDirectory(_ label: String) throws -> String {
    let path = NSTemporaryDirectory() + label + "-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
