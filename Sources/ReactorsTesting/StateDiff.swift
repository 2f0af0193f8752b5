import JSONCodec
import Reactors

/// What differs between the state a test expects and the one the reactor produced, one line per path, in the
/// wire's terms (the state's JSON as clients see it) plus the `@Pulse` counts that JSON leaves out.
///
/// ```
/// send(check(0)): the state (version 2) is not the expected one (expected → actual):
///   items[0].done: false → true
///   alert (@Pulse): the assertion assigns it 1 time, the reactor assigned it 0 times
/// ```
struct StateDiff {
    /// The differing paths, empty when the two states encode alike and assign the same pulses.
    var lines: [String] = []
    /// The two states as one line of JSON each, when they encode.
    var expectedJSON: String?
    var actualJSON: String?

    /// Compares `expected` with `actual`; `previous` is the state both were made from, to count pulse assignments.
    init<State: Encodable>(expected: State, actual: State, previous: State) {
        let encoder = JSONValueEncoder()
        let expectedValue = try? encoder.encodeValue(expected)
        let actualValue = try? encoder.encodeValue(actual)
        expectedJSON = expectedValue.map { $0.serializedString() }
        actualJSON = actualValue.map { $0.serializedString() }
        if let expectedValue, let actualValue {
            Self.compare(expectedValue, actualValue, path: "", into: &lines)
        }
        let before = Pulses.counts(of: previous)
        let wanted = Pulses.counts(of: expected)
        let got = Pulses.counts(of: actual)
        for name in wanted.keys.sorted() where wanted[name] != got[name] {
            let start = before[name] ?? 0
            let assertion = (wanted[name] ?? 0) &- start
            let reactor = (got[name] ?? 0) &- start
            lines.append(
                "\(name) (@Pulse): the assertion assigns it \(Self.times(assertion)), "
                    + "the reactor assigned it \(Self.times(reactor))")
        }
    }

    /// The report: the differing paths, then both states in full (or why they could not be shown).
    func report(headline: String) -> String {
        var text = headline
        if lines.isEmpty {
            text +=
                "\n  (the states differ in a way their JSON and pulse counts do not show: a property left out of "
                + "encoding, or a custom ==)"
        } else {
            text += " (expected → actual):"
            for line in lines { text += "\n  " + line }
        }
        text += "\n  expected: " + (expectedJSON ?? "(does not encode)")
        text += "\n  actual:   " + (actualJSON ?? "(does not encode)")
        return text
    }

    /// Adds a line for each path below `path` where the two values differ.
    static func compare(_ expected: JSONValue?, _ actual: JSONValue?, path: String, into lines: inout [String]) {
        switch (expected, actual) {
        case (.object(let wanted)?, .object(let got)?):
            var keys = wanted.keys
            keys += got.keys.filter { !wanted.contains(key: $0) }
            for key in keys {
                compare(wanted[key], got[key], path: path.isEmpty ? key : path + "." + key, into: &lines)
            }
        case (.array(let wanted)?, .array(let got)?):
            for index in 0..<max(wanted.count, got.count) {
                // Spelled out: a bare `nil` here would be JSONValue's own nil literal, `null`.
                let expectedElement: JSONValue? = index < wanted.count ? .some(wanted[index]) : .none
                let actualElement: JSONValue? = index < got.count ? .some(got[index]) : .none
                compare(expectedElement, actualElement, path: path + "[\(index)]", into: &lines)
            }
        default:
            guard expected != actual else { return }
            lines.append("\(path.isEmpty ? "state" : path): \(describe(expected)) → \(describe(actual))")
        }
    }

    /// A value as one line of JSON, or `(absent)` when the member or element is not there (a nil optional).
    static func describe(_ value: JSONValue?) -> String {
        guard let value else { return "(absent)" }
        let text = value.serializedString()
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    /// "1 time", "2 times".
    static func times(_ count: UInt64) -> String { count == 1 ? "1 time" : "\(count) times" }
}
