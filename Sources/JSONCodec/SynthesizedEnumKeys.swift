import Synchronization

/// Memo of which nested key types are the per-case keys of a synthesized enum `Codable`.
enum SynthesizedEnumKeys {
    static let memo = Mutex<[ObjectIdentifier: Bool]>([:])

    /// Synthesized `Codable` for `case follow(userID:)` opens
    /// `nestedContainer(keyedBy: FollowCodingKeys.self, forKey: .follow)`
    /// from a container keyed by `CodingKeys`; the generated names are the tell. The nested name comes from the
    /// case's identifier, not its key, so only the suffix is checked: a renamed case key (`case follow = "fol"`)
    /// still counts.
    static func isCasePayload<Outer, Nested>(outer: Outer.Type, nested: Nested.Type, caseName: String) -> Bool {
        let id = ObjectIdentifier(Nested.self)
        if let known = memo.withLock({ $0[id] }) { return known }
        let nestedName = String(describing: Nested.self)
        let result =
            String(describing: Outer.self) == "CodingKeys" && nestedName != "CodingKeys"
            && nestedName.hasSuffix("CodingKeys")
        memo.withLock { $0[id] = result }
        return result
    }
}
