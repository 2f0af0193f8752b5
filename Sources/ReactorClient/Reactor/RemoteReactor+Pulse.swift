import Reactors

extension RemoteReactor {
    /// Every assignment of the `@Pulse` property `keyPath` names (`\.$alert`, or `\.editor.$alert` for one of a
    /// nested struct), from now on, even of an equal value (ReactorKit's `reactor.pulse(\.$alert)`); finishes when
    /// the reactor stops or the session ends.
    ///
    /// ```swift
    /// for await alert in reactor.pulse(\.$alert) {
    ///     if let alert { present(alert) }
    /// }
    /// ```
    /// The key path must lead to a stored `@Pulse` property that `State` reaches through stored struct
    /// properties (the ones the server reports); anything else is a programming error and stops the program.
    public func pulse<Value: Decodable & Sendable>(_ keyPath: KeyPath<R.State, Pulse<Value>>) -> AsyncStream<Value> {
        guard let name = PulseField.name(of: { $0[keyPath: keyPath] }, in: currentState) else {
            preconditionFailure(
                "pulse(\(keyPath)): not a stored @Pulse property of \(R.State.self) reached through struct properties")
        }
        return mirror.pulses(named: name, as: Value.self)
    }

    /// Every assignment of the pulse named `name` (its path: `alert`, `editor.alert`), decoded as `Value`, from now on.
    public func pulse<Value: Decodable & Sendable>(named name: String, as type: Value.Type) -> AsyncStream<Value> {
        mirror.pulses(named: name, as: Value.self)
    }
}
