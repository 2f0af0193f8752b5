/// Why a request body is not an action of the reactor's type; each case maps to one API error code.
public enum ActionDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The body is not JSON (`invalid_json`).
    case invalidJSON(JSONParseError)
    /// The body is JSON but not an object (`unknown_action`: there is no `"type"` to read).
    case notAnObject
    /// The object has no `"type"` member (`unknown_action`).
    case missingType
    /// `"type"` is not a string (`unknown_action`).
    case typeNotString
    /// `"type"` names no case of the action type (`unknown_action`).
    case unknownType(String)
    /// The case exists but its payload does not decode (`invalid_action`); `field` is the wire path, if any.
    case invalidPayload(type: String, field: String?, message: String)

    /// True for the errors the API reports as `unknown_action`.
    public var isUnknownAction: Bool {
        switch self {
        case .notAnObject, .missingType, .typeNotString, .unknownType: true
        case .invalidJSON, .invalidPayload: false
        }
    }

    /// The API error code: `invalid_json`, `unknown_action` or `invalid_action`.
    public var code: String {
        switch self {
        case .invalidJSON: "invalid_json"
        case .invalidPayload: "invalid_action"
        case .notAnObject, .missingType, .typeNotString, .unknownType: "unknown_action"
        }
    }

    /// A sentence for the API response that names the offending type or field.
    public var message: String {
        switch self {
        case .invalidJSON(let error): "invalid JSON: \(error.message)"
        case .notAnObject: "an action must be a JSON object with a \"type\" member, e.g. {\"type\": \"increase\"}"
        case .missingType: "the action has no \"type\" member naming its case"
        case .typeNotString: "the action's \"type\" member must be a string naming its case"
        case .unknownType(let name): "unknown action type \(JSONValue.string(name).serializedString())"
        case .invalidPayload(let type, _, let message):
            "invalid \(JSONValue.string(type).serializedString()) action: \(message)"
        }
    }

    /// The same as `message`.
    public var description: String { message }
}
