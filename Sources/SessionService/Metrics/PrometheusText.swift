/// Renders metrics in the Prometheus text exposition format (version 0.0.4).
public struct PrometheusText {
    public private(set) var output = ""

    public init() {}

    /// The content type scrapers expect for this format.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Starts a metric family with its help text and type (`counter`, `gauge`, `histogram`).
    public mutating func family(_ name: String, type: String, help: String) {
        output += "# HELP \(name) \(Self.escapeHelp(help))\n# TYPE \(name) \(type)\n"
    }

    /// One sample line.
    public mutating func sample(_ name: String, labels: KeyValuePairs<String, String> = [:], value: Double) {
        sample(name, labels: labels.map { ($0.key, $0.value) }, value: value)
    }

    /// One sample line with labels in the given order.
    public mutating func sample(_ name: String, labels: [(String, String)], value: Double) {
        output += name
        if !labels.isEmpty {
            output += "{"
            for (index, (key, labelValue)) in labels.enumerated() {
                if index > 0 { output += "," }
                output += "\(key)=\"\(Self.escapeLabel(labelValue))\""
            }
            output += "}"
        }
        output += " " + Self.format(value) + "\n"
    }

    /// Integer-valued sample with labels in the given order.
    public mutating func sample(_ name: String, labels: [(String, String)], value: Int) {
        sample(name, labels: labels, value: Double(value))
    }

    /// Integer-valued sample.
    public mutating func sample(_ name: String, labels: KeyValuePairs<String, String> = [:], value: Int) {
        sample(name, labels: labels, value: Double(value))
    }

    /// All lines of a histogram family (`_bucket`, `_sum`, `_count`).
    public mutating func histogram(_ name: String, help: String, _ histogram: Histogram) {
        family(name, type: "histogram", help: help)
        histogramSamples(name, labels: [:], histogram)
    }

    /// The `_bucket`, `_sum` and `_count` lines of one labelled histogram of a family already started.
    public mutating func histogramSamples(_ name: String, labels: [String: String], _ histogram: Histogram) {
        let snapshot = histogram.snapshot()
        let fixed = labels.sorted { $0.key < $1.key }
        for (bound, count) in zip(histogram.bounds, snapshot.cumulative) {
            sample(name + "_bucket", labels: fixed + [("le", Self.format(bound))], value: count)
        }
        sample(name + "_bucket", labels: fixed + [("le", "+Inf")], value: snapshot.count)
        sample(name + "_sum", labels: fixed, value: snapshot.sum)
        sample(name + "_count", labels: fixed, value: snapshot.count)
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }

    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func escapeHelp(_ value: String) -> String {
        value.replacingBackslashAndNewline()
    }
}

extension String {
    fileprivate func replacingBackslashAndNewline() -> String {
        var out = ""
        for character in self {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
