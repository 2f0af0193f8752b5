/// Settings as nested JSON objects, in schema order: `auth.jwt.secret` is `{"auth": {"jwt": {"secret": …}}}`.
final class ConfigurationTree {
    private var members: [(name: String, value: ConfigurationValue?, child: ConfigurationTree?)] = []

    /// Adds the value at the path of key parts, creating the objects on the way.
    func insert(_ path: ArraySlice<String>, _ value: ConfigurationValue) {
        guard let name = path.first else { return }
        if path.count == 1 { return members.append((name, value, nil)) }
        if let existing = members.last(where: { $0.name == name })?.child {
            return existing.insert(path.dropFirst(), value)
        }
        let child = ConfigurationTree()
        members.append((name, nil, child))
        child.insert(path.dropFirst(), value)
    }

    /// Pretty-printed JSON, two spaces per level.
    func json(indent: String) -> String {
        let inner = indent + "  "
        let lines = members.map { member in
            "\(inner)\(ConfigurationValue.quoted(member.name)): "
                + (member.child?.json(indent: inner) ?? member.value?.json ?? "null")
        }
        return "{\n" + lines.joined(separator: ",\n") + "\n\(indent)}"
    }
}
