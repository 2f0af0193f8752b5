@_spi(PulseLayout) import Reactors

/// Finds which `@Pulse` property a key path such as `\.$alert` or `\.editor.$alert` reads, so the façade can
/// follow the server's `event: pulse` of that name (the server names a pulse by its path of property names,
/// without the wrapper's underscore: `alert`, `editor.alert`).
///
/// A decoded state carries no pulse counts, and `\.$alert` is a computed key path (the wrapper's projected value),
/// so neither the value nor a field offset says which property it is. Instead: in a copy of a state, every
/// delivered `Pulse<Value>` gets a distinct count, the key path is applied, and the count it returns names the
/// property.
enum PulseField {
    /// The pulse's path, or nil when `read` returns no delivered stored `Pulse<Value>` of `State`.
    static func name<State, Value>(of read: (State) -> Pulse<Value>, in sample: State) -> String? {
        let candidates = Pulses.deliveredFields(of: State.self).filter { $0.type == Pulse<Value>.self }
        guard !candidates.isEmpty else { return nil }
        // Counts no real state reaches by assignment, so a match cannot be a coincidence.
        let marker: UInt64 = 0x5EED_0000_0000_0000
        var probe = sample
        withUnsafeMutableBytes(of: &probe) { raw in
            for (index, candidate) in candidates.enumerated() {
                let field = (raw.baseAddress! + candidate.offset).assumingMemoryBound(to: Pulse<Value>.self)
                field.pointee = Pulse(value: field.pointee.value, count: marker + UInt64(index))
            }
        }
        let count = read(probe).count
        guard count >= marker, count - marker < UInt64(candidates.count) else { return nil }
        return candidates[Int(count - marker)].name
    }
}
