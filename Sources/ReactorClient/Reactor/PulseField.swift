@_spi(Reflection) import Swift
import Reactors

/// Finds which top-level `@Pulse` property a key path such as `\.$alert` reads, so the façade can follow the
/// server's `event: pulse` of that name (the server names a pulse after its property, without the underscore).
///
/// A decoded state carries no pulse counts, and `\.$alert` is a computed key path (the wrapper's projected value),
/// so neither the value nor a field offset says which property it is. Instead: in a copy of a state, every stored
/// `Pulse<Value>` gets a distinct count, the key path is applied, and the count it returns names the property.
enum PulseField {
    /// The property name, or nil when `read` returns no top-level stored `Pulse<Value>` of `State`.
    static func name<State, Value>(of read: (State) -> Pulse<Value>, in sample: State) -> String? {
        guard !(State.self is AnyObject.Type) else { return nil }
        var candidates: [(name: String, offset: Int)] = []
        _ = _forEachField(of: State.self) { name, offset, type, _ in
            if type == Pulse<Value>.self { candidates.append((String(cString: name), offset)) }
            return true
        }
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
        let name = candidates[Int(count - marker)].name
        return name.hasPrefix("_") ? String(name.dropFirst()) : name
    }
}
