import Foundation
import JSONCodec
import Reactors

/// The admin calls of one session, typed by its reactor: forced states are encoded from `State`, logged
/// actions decoded as `Action`, past states decoded as `State`.
///
/// ```swift
/// let todo = admin.session("list-1", as: TodoReactor.self)
/// var page = try await todo.actions(limit: 100)
/// while let next = page.next { page = try await todo.actions(since: next, limit: 100) }
/// ```
public struct AdminSession<R: Reactor>: Sendable {
    /// The admin API this goes through.
    public let admin: ReactorAdmin
    /// The session's id.
    public let id: String

    /// `PUT /admin/sessions/{id}/stub`: stub mode on (actions are logged, not run) or off; returns the new mode.
    @discardableResult
    public func setStub(_ enabled: Bool) async throws(ReactorClientError) -> Bool {
        let body = try await admin.json(
            "PUT", ["sessions", id, "stub"], body: JSONValue.object(["enabled": .bool(enabled)]).serialized())
        return try APIResponse.bool(body, "stub")
    }

    /// `PUT /admin/sessions/{id}/state` (stub mode only, else 409 `stub_disabled`): emits `state` as a new version.
    @discardableResult
    public func forceState(_ state: R.State) async throws(ReactorClientError) -> VersionedState<R.State> {
        let body = try await admin.json("PUT", ["sessions", id, "state"], body: try APIResponse.encode(state))
        return try VersionedState(body, as: R.State.self, "the forced state")
    }

    /// `GET /admin/sessions/{id}/actions`: log entries with `seq` > `since`, oldest first, at most `limit`
    /// (the server's default, 1000, when nil); ``ActionLogPage/next`` is set when more remain.
    public func actions(since: UInt64 = 0, limit: Int? = nil) async throws(ReactorClientError) -> ActionLogPage<
        R.Action
    > {
        var query = [("since", String(since))]
        if let limit { query.append(("limit", String(limit))) }
        let body = try await admin.json("GET", ["sessions", id, "actions"], query: query)
        guard let list = try APIResponse.member(body, "actions").arrayValue else {
            throw .invalidResponse("\"actions\" is not a list")
        }
        var entries: [ActionLogEntry<R.Action>] = []
        for entry in list { entries.append(try ActionLogEntry(entry)) }
        return ActionLogPage(entries: entries, next: body["next"]?.numberValue?.uint64Value)
    }

    /// The whole log after `since`, following `next` page by page.
    public func allActions(since: UInt64 = 0, pageSize: Int? = nil) async throws(ReactorClientError) -> [ActionLogEntry<
        R.Action
    >] {
        var page = try await actions(since: since, limit: pageSize)
        var entries = page.entries
        while let next = page.next {
            page = try await actions(since: next, limit: pageSize)
            entries += page.entries
        }
        return entries
    }

    /// `GET /admin/sessions/{id}/versions/{v}`: the state subscribers saw at `version` (410 `version_gone` when
    /// older than the retained history, 404 `unknown_version` when not reached yet).
    public func state(atVersion version: UInt64) async throws(ReactorClientError) -> VersionedState<R.State> {
        let body = try await admin.json("GET", ["sessions", id, "versions", String(version)])
        return try VersionedState(body, as: R.State.self, "the state at version \(version)")
    }

    /// `POST /admin/sessions/{id}/fork`: a new session holding this one's state at `version` (its versions go on
    /// from there); `newID` chooses its id.
    public func fork(atVersion version: UInt64, id newID: String? = nil) async throws(ReactorClientError)
        -> RemoteSession<R>
    {
        var request: JSONValue = ["version": .number(.int(Int64(clamping: version)))]
        if let newID { request = ["version": .number(.int(Int64(clamping: version))), "id": .string(newID)] }
        let body = try await admin.json("POST", ["sessions", id, "fork"], body: request.serialized())
        return try RemoteSession(client: admin.client, created: body)
    }

    /// `POST /admin/sessions/{id}/release`: loads a session a crash of its reactor quarantined (after a fixed
    /// reactor is deployed); its version and state, or 409 `session_unavailable` when it still cannot be served.
    public func release() async throws(ReactorClientError) -> VersionedState<R.State> {
        let body = try await admin.json("POST", ["sessions", id, "release"])
        return try VersionedState(body, as: R.State.self, "the released session")
    }

    /// `POST /admin/sessions/{id}/token` (`token` mode): a new capability token; the old one stops working.
    public func replaceToken() async throws(ReactorClientError) -> String {
        try APIResponse.string(try await admin.json("POST", ["sessions", id, "token"]), "token")
    }
}

/// One page of an action log.
public struct ActionLogPage<Action: Sendable>: Sendable {
    /// The entries, oldest first.
    public var entries: [ActionLogEntry<Action>]
    /// When more remain: the `since` of the next page.
    public var next: UInt64?
}

/// One accepted action.
public struct ActionLogEntry<Action: Sendable>: Sendable {
    /// Its number in the session, from 1.
    public var seq: UInt64
    /// When the server accepted it.
    public var at: Date
    /// The action, or nil when it no longer decodes as `Action` (see ``json``).
    public var action: Action?
    /// The action as it was logged.
    public var json: JSONValue
    /// Accepted in stub mode: logged, not run.
    public var stubbed: Bool
    /// Accepted before a crash while its effects were still running; never re-run.
    public var interrupted: Bool
    /// The action the session's reactor was running when it crashed the server (the session is quarantined).
    public var crashed: Bool
}

extension ActionLogEntry where Action: Decodable {
    init(_ entry: JSONValue) throws(ReactorClientError) {
        seq = try APIResponse.integer(entry, "seq")
        let stamp = try APIResponse.string(entry, "at")
        guard let date = RFC3339.date(stamp) else { throw .invalidResponse("\"at\" is not an RFC 3339 time: \(stamp)") }
        at = date
        json = try APIResponse.member(entry, "action")
        action = try? decodeAction(Action.self, from: json)
        stubbed = try APIResponse.bool(entry, "stubbed")
        interrupted = entry["interrupted"]?.boolValue ?? false
        crashed = entry["crashed"]?.boolValue ?? false
    }
}

extension ActionLogEntry: Equatable where Action: Equatable {}
