@_spi(Reflection) import Swift

/// What storing and registering states need to know of their `@Pulse` properties.
///
/// A state's JSON holds pulse values only, so whatever stores states keeps the counts beside them and puts
/// them back when it decodes, and a client never sees a `count` go back:
/// ```swift
/// let counts = Pulses.counts(of: state)            // stored next to the state's JSON
/// var loaded = try decoder.decode(State.self, from: json)
/// Pulses.restore(counts, into: &loaded)
/// ```
public enum Pulses {
    /// The count of every top-level `@Pulse` property of `state`, by name; empty for states without pulses.
    public static func counts<State>(of state: State) -> [String: UInt64] {
        PulseScanner.scanner(for: State.self)?.counts(of: state) ?? [:]
    }

    /// Sets the counts of `state`'s pulses to those named in `counts` (other names are ignored).
    public static func restore<State>(_ counts: [String: UInt64], into state: inout State) {
        guard !counts.isEmpty else { return }
        PulseScanner.scanner(for: State.self)?.restore(counts, into: &state)
    }

    /// What forcing a state does to its pulses: each counts as assigned, its count continuing from the same
    /// pulse of the state it replaces.
    public static func force<State>(_ forced: inout State, replacing previous: State) {
        PulseScanner.scanner(for: State.self)?.force(&forced, replacing: previous)
    }

    /// The `@Pulse` properties of `State` the runtime cannot deliver, as dotted paths (`settings.alert`,
    /// `items[].flag`): only top-level properties of a struct state are compared and sent. Found through
    /// nested structs, optionals, arrays, dictionaries and sets; empty when every pulse is delivered.
    public static func undeliverable<State>(in type: State.Type) -> [String] {
        var search = NestedPulseSearch()
        if State.self is AnyObject.Type {
            // A class state has no inline layout to compare: none of its pulses would be delivered.
            // `_EachFieldOptions.classType` (1 << 0), spelled out: the static is a `var`, which strict concurrency refuses.
            search.visit(State.self, path: "", options: _EachFieldOptions(rawValue: 1), topLevel: false)
        } else {
            search.visit(State.self, path: "", options: [], topLevel: true)
        }
        return search.found
    }
}

/// A walk over a state type's stored properties that notes every `@Pulse` outside the top level.
struct NestedPulseSearch {
    var found: [String] = []
    /// The types being visited around the current path: a type found inside itself is not entered again.
    var enclosing: [ObjectIdentifier] = []

    /// Visits the stored properties of `type`; at the top level a pulse is fine, anywhere else it is noted.
    mutating func visit(_ type: Any.Type, path: String, options: _EachFieldOptions, topLevel: Bool) {
        // The state itself may recur inside (children: [State]); that copy is not top level, so it is
        // entered once more, and not again below it.
        if !topLevel {
            guard !enclosing.contains(ObjectIdentifier(type)) else { return }
            enclosing.append(ObjectIdentifier(type))
        }
        defer { if !topLevel { enclosing.removeLast() } }
        var fields: [(String, Any.Type)] = []
        _ = _forEachField(of: type, options: options) { name, _, fieldType, _ in
            let label = String(cString: name)
            fields.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, fieldType))
            return true
        }
        for (label, fieldType) in fields {
            let fieldPath = path.isEmpty ? label : "\(path).\(label)"
            if let pulse = fieldType as? any AnyPulse.Type {
                if !topLevel { found.append(fieldPath) }
                inspect(pulse.valueType, path: fieldPath)
            } else {
                inspect(fieldType, path: fieldPath)
            }
        }
    }

    /// Looks inside a value of `type` found at `path` (never the top level).
    mutating func inspect(_ type: Any.Type, path: String) {
        if let pulse = type as? any AnyPulse.Type {
            found.append(path)
            return inspect(pulse.valueType, path: path)
        }
        if let container = type as? any PulseSearchContainer.Type {
            for element in container.elementTypes { inspect(element, path: path + container.pathSuffix) }
            return
        }
        if Self.isLeaf(type) { return }
        visit(type, path: path, options: [], topLevel: false)
    }

    /// Types with no user properties inside (their stored fields are the standard library's own).
    static func isLeaf(_ type: Any.Type) -> Bool {
        type is any BinaryInteger.Type || type is any BinaryFloatingPoint.Type
            || type == Bool.self || type == String.self || type == Substring.self || type == Character.self
    }
}

/// Generic containers whose elements the search looks into.
protocol PulseSearchContainer {
    static var elementTypes: [Any.Type] { get }
    static var pathSuffix: String { get }
}

extension Optional: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Wrapped.self] }
    static var pathSuffix: String { "" }
}

extension Array: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Element.self] }
    static var pathSuffix: String { "[]" }
}

extension ContiguousArray: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Element.self] }
    static var pathSuffix: String { "[]" }
}

extension Set: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Element.self] }
    static var pathSuffix: String { "[]" }
}

extension Dictionary: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Value.self] }
    static var pathSuffix: String { "[]" }
}
