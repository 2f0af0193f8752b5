@_spi(Reflection) import Swift

/// Where the `@Pulse` properties of a state type are: those the runtime delivers, by dotted path
/// (`alert`, `editor.alert`) with their byte offset in the state, and those it cannot, with why.
///
/// A pulse is delivered when it is reachable from the state through stored properties of structs only:
/// it then sits at a fixed offset in every state, so its count is read in place. One inside an optional,
/// a collection, a class or another pulse's value has no such place (or no single one) and is reported.
struct PulseLayout {
    /// A delivered pulse.
    struct Field: Sendable {
        /// Its dotted path of property names, without the wrapper's underscore (`editor.alert`).
        var name: String
        /// Its byte offset from the start of the state.
        var offset: Int
        var type: any AnyPulse.Type
    }

    var delivered: [Field] = []
    var undeliverable: [UndeliverablePulse] = []
    /// The types being searched around the current path: a type found inside itself is not entered again.
    private var enclosing: [ObjectIdentifier] = []

    /// The layout of `State`.
    init(of state: Any.Type) {
        if Self.isClass(state) {
            search(state, path: "", reason: "in a class state (it has no inline layout to compare)")
        } else if Self.isStruct(state) {
            walk(state, path: "", offset: 0)
        }
    }

    /// Notes every pulse among the stored properties of struct `type` (at `offset` in the state) as delivered,
    /// walks nested structs, and searches anything else for pulses it cannot deliver.
    private mutating func walk(_ type: Any.Type, path: String, offset: Int) {
        for (label, fieldOffset, fieldType) in Self.fields(of: type, classType: false) {
            let fieldPath = path.isEmpty ? label : "\(path).\(label)"
            if let pulse = fieldType as? any AnyPulse.Type {
                delivered.append(Field(name: fieldPath, offset: offset + fieldOffset, type: pulse))
                inspect(pulse.valueType, path: fieldPath, reason: "inside the value of the @Pulse \(fieldPath)")
            } else if let reason = Self.containerReason(fieldType) {
                inspect(fieldType, path: fieldPath, reason: reason)
            } else if Self.isClass(fieldType) {
                inspect(fieldType, path: fieldPath, reason: "in a class")
            } else if Self.isStruct(fieldType), !Self.isLeaf(fieldType) {
                walk(fieldType, path: fieldPath, offset: offset + fieldOffset)
            }
        }
    }

    /// Notes every pulse found inside a value of `type` at `path` as undeliverable, for `reason`.
    private mutating func inspect(_ type: Any.Type, path: String, reason: String) {
        if let pulse = type as? any AnyPulse.Type {
            undeliverable.append(UndeliverablePulse(path: path, reason: reason))
            return inspect(pulse.valueType, path: path, reason: reason)
        }
        if let container = type as? any PulseSearchContainer.Type {
            for element in container.elementTypes {
                inspect(element, path: path + container.pathSuffix, reason: reason)
            }
            return
        }
        guard (Self.isStruct(type) && !Self.isLeaf(type)) || Self.isClass(type) else { return }
        search(type, path: path, reason: reason)
    }

    /// Inspects the stored properties of a struct or class `type`, once per enclosing chain.
    private mutating func search(_ type: Any.Type, path: String, reason: String) {
        // A type may recur inside itself (children: [State]): it is entered once more, not again below.
        guard !enclosing.contains(ObjectIdentifier(type)) else { return }
        enclosing.append(ObjectIdentifier(type))
        defer { enclosing.removeLast() }
        for (label, _, fieldType) in Self.fields(of: type, classType: Self.isClass(type)) {
            inspect(fieldType, path: path.isEmpty ? label : "\(path).\(label)", reason: reason)
        }
    }

    /// The stored properties of a struct (or, with `classType`, a class): label without the wrapper's
    /// underscore, offset, type.
    private static func fields(of type: Any.Type, classType: Bool) -> [(String, Int, Any.Type)] {
        var fields: [(String, Int, Any.Type)] = []
        // `_EachFieldOptions.classType` (1 << 0), spelled out: the static is a `var`, which strict concurrency refuses.
        let options = classType ? _EachFieldOptions(rawValue: 1) : []
        _ = _forEachField(of: type, options: options) { name, offset, fieldType, _ in
            let label = String(cString: name)
            fields.append((label.hasPrefix("_") ? String(label.dropFirst()) : label, offset, fieldType))
            return true
        }
        return fields
    }

    /// Why a pulse inside a value of container type `type` cannot be delivered; nil for other types.
    private static func containerReason(_ type: Any.Type) -> String? {
        guard let container = type as? any PulseSearchContainer.Type else { return nil }
        return container.reason
    }

    /// The runtime's metadata kind of a struct (`MetadataKind::Struct`, part of the Swift ABI). Read
    /// rather than asked of `_forEachField`, which would crash on an existential (`any P`) type.
    private static let structKind: UInt = 0x200

    /// Whether `type` is a struct: its fields are stored inline.
    static func isStruct(_ type: Any.Type) -> Bool {
        unsafeBitCast(type, to: UnsafePointer<UInt>.self).pointee == structKind
    }

    /// Whether `type` is a class: its fields are behind a reference.
    static func isClass(_ type: Any.Type) -> Bool { type is AnyObject.Type }

    /// Types with no user properties inside (their stored fields are the standard library's own).
    static func isLeaf(_ type: Any.Type) -> Bool {
        type is any BinaryInteger.Type || type is any BinaryFloatingPoint.Type
            || type == Bool.self || type == String.self || type == Substring.self || type == Character.self
    }
}

/// A `@Pulse` property the runtime cannot deliver: where it is, and why.
public struct UndeliverablePulse: Sendable, Equatable, CustomStringConvertible {
    /// The dotted path of property names, `[]` marking an element (`items[].highlight`).
    public var path: String
    /// Why, e.g. `in an array element`.
    public var reason: String

    /// Describes one undeliverable pulse.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `path (reason)`.
    public var description: String { "\(path) (\(reason))" }
}

/// Generic containers whose elements the search looks into, and why a pulse there is not delivered.
protocol PulseSearchContainer {
    static var elementTypes: [Any.Type] { get }
    static var pathSuffix: String { get }
    static var reason: String { get }
}

extension Optional: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Wrapped.self] }
    static var pathSuffix: String { "" }
    static var reason: String { "inside an optional" }
}

extension Array: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Element.self] }
    static var pathSuffix: String { "[]" }
    static var reason: String { "in an array element" }
}

extension ContiguousArray: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Element.self] }
    static var pathSuffix: String { "[]" }
    static var reason: String { "in an array element" }
}

extension Set: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Element.self] }
    static var pathSuffix: String { "[]" }
    static var reason: String { "in a set element" }
}

extension Dictionary: PulseSearchContainer {
    static var elementTypes: [Any.Type] { [Value.self] }
    static var pathSuffix: String { "[]" }
    static var reason: String { "in a dictionary value" }
}
