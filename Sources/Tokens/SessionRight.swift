/// What a JWT may allow on a session (the `rights` claim): API.md's four rights.
public enum SessionRight: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `POST /sessions`.
    case create
    /// `GET /sessions/{id}`, its event stream and its part of `/events`.
    case read
    /// `POST /sessions/{id}/actions`.
    case act
    /// `DELETE /sessions/{id}`.
    case delete

    /// The claim's spelling: `create`, `read`, `act`, `delete`.
    public var description: String { rawValue }
}
