/// Declares every case name an action type accepts, so `decodeAction` can tell an unknown `"type"`
/// (`unknown_action`) from a known one whose payload is wrong (`invalid_action`) before decoding.
///
/// Synthesized enum `Codable` does not need it (the decoder sees which case names exist); adopt it
/// for hand-written `Codable`:
///
/// ```swift
/// extension Action: ActionCaseNames { static let actionCaseNames = ["increase", "follow"] }
/// ```
public protocol ActionCaseNames {
    /// Every accepted value of the `"type"` member.
    static var actionCaseNames: [String] { get }
}
