import Synchronization

/// Memo of which nested key types are the per-case keys of a synthesized enum `Codable`.
enum SynthesizedEnumKeys {
    static let memo = Mutex<[ObjectIdentifier: Bool]>([:])

    /// Synthesized `Codable` for `case follow(userID:)` opens `nestedContainer(keyedBy: FollowCodingKeys.self, forKey: .follow)`
    /// from a container keyed by `CodingKeys`; the generated names are the tell.
    static func isCasePayload<Outer, Nested>(outer: Outer.Type, nested: Nested.Type, caseName: String) -> Bool {
        let id = ObjectIdentifier(Nested.self)
        if let known = memo.withLock({ $0[id] }) { return known }
        let expected = caseName.prefix(1).uppercased() + caseName.dropFirst() + "CodingKeys"
        let result = String(describing: Nested.self) == expected && String(describing: Outer.self) == "CodingKeys"
        memo.withLock { $0[id] = result }
        return result
    }
}
