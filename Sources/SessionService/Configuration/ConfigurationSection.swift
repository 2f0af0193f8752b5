/// Settings that a catalog or an example adds to the server's own, as one value of its own type: its
/// defaults are its initial values, its rows go in the schema (``ConfigurationSchema/adding(_:)``) with key
/// paths through ``ServerConfiguration/subscript(section:)``, and a configuration holds it beside the server's
/// sections.
///
/// ```swift
/// struct UpstreamSettings: ConfigurationSection {
///     var baseURL = "https://api.example"
///     init() {}
/// }
/// extension ConfigurationSectionKey where Section == UpstreamSettings {
///     static var upstream: Self { Self() }
/// }
/// let schema = ConfigurationSchema.server.adding([
///     .string("upstream.baseURL", \.[section: .upstream].baseURL, "Where the upstream is."),
/// ])
/// let baseURL = configuration[section: .upstream].baseURL
/// ```
public protocol ConfigurationSection: Sendable, Equatable {
    /// Every setting at its default.
    init()
}

/// Names a ``ConfigurationSection`` inside a ``ServerConfiguration`` (the index of its key paths).
public struct ConfigurationSectionKey<Section: ConfigurationSection>: Hashable, Sendable {
    public init() {}
}

extension ServerConfiguration {
    /// The contributed section `key` names: its defaults until something sets it.
    public subscript<Section: ConfigurationSection>(section key: ConfigurationSectionKey<Section>) -> Section {
        get { sections.value(Section.self) }
        set { sections.set(newValue) }
    }
}

/// The contributed sections of a configuration, by type; a section at its defaults is not stored, so
/// configurations that hold the same values are equal however they were set.
struct ConfigurationSections: Sendable, Equatable {
    private var values: [ObjectIdentifier: any ConfigurationSection] = [:]

    /// The section of this type: what was set, else its defaults.
    func value<Section: ConfigurationSection>(_ type: Section.Type) -> Section {
        values[ObjectIdentifier(type)] as? Section ?? Section()
    }

    /// Keeps `section`, or forgets its type's when it holds the defaults.
    mutating func set<Section: ConfigurationSection>(_ section: Section) {
        values[ObjectIdentifier(Section.self)] = section == Section() ? nil : section
    }

    static func == (a: Self, b: Self) -> Bool {
        a.values.count == b.values.count
            && a.values.allSatisfy { type, section in b.values[type].map { section.isEqual(to: $0) } ?? false }
    }
}

extension ConfigurationSection {
    /// Whether `other` is a section of this type holding the same values.
    func isEqual(to other: any ConfigurationSection) -> Bool {
        (other as? Self) == self
    }
}
