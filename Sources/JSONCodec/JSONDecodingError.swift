/// A value that does not decode as the requested type: which field, and what was wrong.
///
/// `message` is ready for an API response: `"value": expected an integer, found "x"`,
/// `missing field "text"`, `"items[2].done": expected a boolean, found null`.
public struct JSONDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path to the offending field (`items[2].text`), nil when the problem is the whole value.
    public var field: String?
    /// What was wrong, without the field: `expected an integer, found "x"`, `missing field`.
    public var problem: String
    /// Field and problem in one sentence.
    public var message: String

    /// Creates an error from its parts.
    public init(field: String?, problem: String, message: String) {
        self.field = field
        self.problem = problem
        self.message = message
    }

    /// The same as `message`.
    public var description: String { message }

    /// Like `init(_:)`, but names the enum case problem when synthesized enum decoding failed on our wire shape.
    init(_ error: DecodingError, enumMismatch: JSONDecoderImpl.EnumMismatch?) {
        guard case .typeMismatch(_, let context) = error, let enumMismatch,
            CodingPathFormat.render(context.codingPath) == CodingPathFormat.render(enumMismatch.path)
        else {
            self.init(error)
            return
        }
        let field = CodingPathFormat.render(enumMismatch.path + [AnyKey("type")]) ?? "type"
        switch enumMismatch.typeMember {
        case nil:
            self.init(field: field, problem: "missing field", message: "missing field \"\(field)\"")
        case .string(let name)?:
            let problem = "unknown case \(JSONValue.string(name).serializedString())"
            self.init(field: field, problem: problem, message: "\"\(field)\": \(problem)")
        case let other?:
            let problem = "expected a string naming the case, found \(CodingPathFormat.describe(other))"
            self.init(field: field, problem: problem, message: "\"\(field)\": \(problem)")
        }
    }

    /// Turns the standard library's `DecodingError` (ours, or one a hand-written `init(from:)` threw) into a message.
    init(_ error: DecodingError) {
        switch error {
        case .keyNotFound(let key, let context):
            let field = CodingPathFormat.render(context.codingPath + [key]) ?? key.stringValue
            self.init(field: field, problem: "missing field", message: "missing field \"\(field)\"")
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let field = CodingPathFormat.render(context.codingPath)
            let problem = context.debugDescription
            self.init(field: field, problem: problem, message: field.map { "\"\($0)\": \(problem)" } ?? problem)
        @unknown default:
            self.init(field: nil, problem: "\(error)", message: "\(error)")
        }
    }
}
