/// Each hosted reactor's specialized `sendAction`, found by the class of the session an action goes to.
///
/// The action route used to look it up by the session's reactor name: hashing the name cost ~345
/// instructions per POST (callgrind). A session's class (`Session<R>`) is one pointer to compare, and every
/// definition registered for one reactor type sends the same way; a server hosts a handful of types, so a
/// scan beats a hash.
struct ActionSenders: Sendable {
    /// One reactor type's sender. A struct, not a tuple: a closure in an array's tuple is kept in its most
    /// general form, and reading one out built a thunk (two allocations per POST).
    private struct Entry {
        let type: ObjectIdentifier
        let send: ReactorDefinition.SendAction
    }

    private let byType: [Entry]

    /// The senders of `definitions`; of two with the same name, the later one (as the catalog keeps it).
    init(_ definitions: [ReactorDefinition]) {
        let named = Dictionary(definitions.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        var byType: [Entry] = []
        for definition in named.values where !byType.contains(where: { $0.type == definition.sessionType }) {
            byType.append(Entry(type: definition.sessionType, send: definition.sendAction))
        }
        self.byType = byType
    }

    /// The sender for `session`, by its class; nil when no hosted reactor made it.
    func sender(for session: any HostedSession) -> ReactorDefinition.SendAction? {
        let type = ObjectIdentifier(Swift.type(of: session))
        for entry in byType where entry.type == type { return entry.send }
        return nil
    }
}
