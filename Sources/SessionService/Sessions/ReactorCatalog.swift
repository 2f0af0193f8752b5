import JSONCodec
import Reactors
import Tokens

/// A reactor type the server hosts under a name: how to describe it and how to start a session of it.
public struct ReactorDefinition: Sendable {
    public let name: String
    /// One sentence for `GET /reactors` and the browser page.
    public let summary: String
    /// Example actions as JSON texts (`{"type":"increase"}`), shown as buttons on the page.
    public let exampleActions: [String]
    /// The initial state as JSON.
    public let initialState: [UInt8]
    /// The reactor's `Reactor.storageVersion`: what its stored records say wrote them.
    public let storageVersion: Int
    /// Whether it was registered with middlewares of its own (which may refuse actions with their own codes).
    public let hasMiddlewares: Bool
    /// What its actions and states look like on the wire, as its author declared; nil when undeclared
    /// (the OpenAPI document then describes them generically).
    public let schema: ReactorSchema?
    /// Whether its sessions take parameters (`"params"` of `POST /sessions`).
    public let takesParams: Bool
    /// Parameters to show as an example (`GET /reactors`, the page's create form), as JSON; nil when none.
    public let exampleParams: [UInt8]?
    /// Checks `"params"` of `POST /sessions` (nil when left out) against the reactor's parameter type.
    @usableFromInline let decodeParams: @Sendable (_ given: JSONValue?) throws(ParamsError) -> SessionParams
    /// Starts a new session with its checked parameters, stored with its access token's hash when there is one.
    @usableFromInline let makeSession:
        @Sendable (
            _ id: String, _ context: SessionContext, _ accessTokenHash: SessionTokenHash?, _ params: SessionParams
        ) -> any PersistentSession
    /// Sends an action to a session of this type. Built where the reactor is registered, so it calls
    /// code specialized for the concrete reactor; going through the protocol would run the generic,
    /// many times slower code.
    @usableFromInline let sendAction: SendAction
    /// The class of its sessions (`Session<R>`): the action route finds `sendAction` by it, without hashing a name.
    @usableFromInline let sessionType: ObjectIdentifier

    @usableFromInline
    typealias SendAction =
        @Sendable (any HostedSession, [UInt8], (@Sendable (Result<EncodedSnapshot, SessionError>) -> Void)?)
        throws(SessionError) -> UInt64
    /// Rebuilds a stored session (snapshot + replayed tail), or says why it cannot.
    @usableFromInline let restoreSession:
        @Sendable (_ id: String, _ context: SessionContext, _ history: StoredHistory, _ journal: SessionJournal)
            throws(RestoreError) -> any PersistentSession
    /// The state (as shown to clients, or `shown` false: as `reduce` keeps it) that a snapshot's state and
    /// the records after it lead to, for session `id` (with the parameters the history carries).
    @usableFromInline let replay:
        @Sendable (
            _ id: String, _ history: StoredVersionHistory, _ shown: Bool
        ) throws(RestoreError) -> [UInt8]
    /// Whether stored session `id` loads, and what had to be made of it (`verify`, and without `reducing` the
    /// check at start, which runs no `reduce`).
    @usableFromInline let check:
        @Sendable (
            _ id: String, _ history: StoredHistory, _ reducing: Bool
        ) -> Result<LoadReport, RestoreError>

    @usableFromInline
    init(
        name: String, summary: String, exampleActions: [String], initialState: [UInt8], storageVersion: Int,
        schema: ReactorSchema?, hasMiddlewares: Bool, takesParams: Bool = false, exampleParams: [UInt8]? = nil,
        decodeParams: @escaping @Sendable (JSONValue?) throws(ParamsError) -> SessionParams = SessionParams.none(for:),
        makeSession:
            @escaping @Sendable (String, SessionContext, SessionTokenHash?, SessionParams)
            -> any PersistentSession,
        restoreSession:
            @escaping @Sendable (String, SessionContext, StoredHistory, SessionJournal) throws(RestoreError) ->
            any PersistentSession,
        replay: @escaping @Sendable (String, StoredVersionHistory, Bool) throws(RestoreError) -> [UInt8],
        check: @escaping @Sendable (String, StoredHistory, Bool) -> Result<LoadReport, RestoreError>,
        sessionType: ObjectIdentifier, sendAction: @escaping SendAction
    ) {
        self.name = name
        self.takesParams = takesParams
        self.exampleParams = exampleParams
        self.decodeParams = decodeParams
        self.summary = summary
        self.exampleActions = exampleActions
        self.initialState = initialState
        self.storageVersion = storageVersion
        self.check = check
        self.hasMiddlewares = hasMiddlewares
        self.schema = schema
        self.makeSession = makeSession
        self.restoreSession = restoreSession
        self.replay = replay
        self.sendAction = sendAction
        self.sessionType = sessionType
    }
}

/// The reactors a server hosts, by name. Register your own next to (or instead of) the examples; a
/// `schema` (its action cases and state) makes `/openapi.json` describe its actions and states exactly,
/// and `middlewares` gives each session the reactor's own `ReactorMiddleware`s (validation, logging, …):
///
/// ```swift
/// var catalog = ReactorCatalog()
/// catalog.register(
///     "counter", summary: "A number you can change.", exampleActions: [#"{"type":"increase"}"#],
///     schema: ReactorSchema(actions: [.action("increase"), .action("decrease")], state: .object(["value": .int])),
///     middlewares: { sessionID in [CounterLimit(maximum: 10)] }
/// ) { CounterReactor() }
/// ```
public struct ReactorCatalog: Sendable {
    public private(set) var definitions: [ReactorDefinition] = []

    public init() {}

    /// Adds a reactor type; `make` builds the reactor of each new session. A name registered twice
    /// replaces the earlier one. Stops the program, naming the field and why, when the reactor's `State` has a
    /// `@Pulse` property the runtime cannot deliver (in an optional, a collection, a class): clients would
    /// never hear of it. Pulses of nested structs are delivered by path (`editor.alert`).
    ///
    /// `middlewares` makes the reactor's own middlewares for the session of the given id, each time one
    /// starts or is loaded back; the session adds them in that order, around its journal's: their
    /// `intercept` runs before an action is accepted (a rejection is answered 422 with its code), `vet`
    /// before a state is journaled, `didReduce` and `didForce` once it has been.
    @inlinable
    public mutating func register<R: Reactor>(
        _ name: String, summary: String = "", exampleActions: [String] = [], schema: ReactorSchema? = nil,
        middlewares: (@Sendable (_ sessionID: String) -> [any ReactorMiddleware<R>])? = nil,
        _ make: @escaping @Sendable () -> R
    ) {
        register(
            name, summary: summary, exampleActions: exampleActions, schema: schema, middlewares: middlewares, make,
            encodeAction: nil)
    }

    /// Adds a reactor type whose actions are `Encodable`: the action log keeps each action encoded
    /// again by code specialized for it (see `decodeActionWithJSON(_:from:parser:encode:)`).
    @inlinable
    public mutating func register<R: Reactor>(
        _ name: String, summary: String = "", exampleActions: [String] = [], schema: ReactorSchema? = nil,
        middlewares: (@Sendable (_ sessionID: String) -> [any ReactorMiddleware<R>])? = nil,
        _ make: @escaping @Sendable () -> R
    ) where R.Action: Encodable {
        register(
            name, summary: summary, exampleActions: exampleActions, schema: schema, middlewares: middlewares, make,
            encodeAction: { try JSONValueEncoder().encode($0) })
    }

    @inlinable
    mutating func register<R: Reactor>(
        _ name: String, summary: String, exampleActions: [String], schema: ReactorSchema?,
        middlewares: (@Sendable (_ sessionID: String) -> [any ReactorMiddleware<R>])?,
        _ make: @escaping @Sendable () -> R, encodeAction: (@Sendable (R.Action) throws -> [UInt8])?
    ) {
        precondition(SessionID.isValid(name), "a reactor name is [A-Za-z0-9_-]{1,64}: \(name)")
        let undelivered = Pulses.undeliverable(in: R.State.self)
        precondition(undelivered.isEmpty, Self.undeliverableMessage(name, undelivered))
        let initialState = (try? JSONValueEncoder().encode(make().initialState)) ?? Array("null".utf8)
        // Where members missing from stored states come from (StoredTypes).
        let template = (try? JSONParser(maxDepth: .max, maxBytes: .max).parse(initialState)) ?? .null
        let definition = ReactorDefinition(
            name: name, summary: summary, exampleActions: exampleActions, initialState: initialState,
            storageVersion: R.storageVersion, schema: schema, hasMiddlewares: middlewares != nil,
            makeSession: { id, context, accessTokenHash, _ in
                let tracer = SessionCallTracer(session: id, reactor: name)
                let own = middlewares.map { made in tracer.run(.middleware) { made(id) } } ?? []
                return Session(
                    id: id, name: name, reactor: make(), context: context, accessTokenHash: accessTokenHash,
                    middlewares: own, tracer: tracer)
            },
            restoreSession: { id, context, history, journal throws(RestoreError) in
                // The author's factory runs as the session's code: a trap in it is the session's crash.
                let tracer = SessionCallTracer(session: id, reactor: name)
                let own = middlewares.map { made in tracer.run(.middleware) { made(id) } } ?? []
                return try Session.restore(
                    id: id, name: name, reactor: make(), template: template, context: context, history: history,
                    journal: journal, middlewares: own, tracer: tracer)
            },
            replay: { id, history, shown throws(RestoreError) in
                try Session<R>.replay(
                    reactor: make(), id: id, name: name, template: template, history: history, shown: shown)
            },
            check: { id, history, reducing in
                Session<R>.check(
                    reactor: make(), id: id, name: name, template: template, history: history, reducing: reducing)
            },
            sessionType: ObjectIdentifier(Session<R>.self),
            sendAction: { session, body, completion throws(SessionError) in
                try unsafeDowncast(session as AnyObject, to: Session<R>.self).send(
                    actionBody: body, completion: completion, encodeAction: encodeAction)
            })
        add(definition)
    }

    /// Why registering reactor `name` stops: the pulses its state cannot deliver, each with why.
    @usableFromInline
    static func undeliverableMessage(_ name: String, _ pulses: [UndeliverablePulse]) -> String {
        """
        reactor \(name): \(pulses.map(\.description).joined(separator: ", ")) would never reach clients: a \
        @Pulse is delivered when State reaches it through stored struct properties only (move it out of there, \
        or make it a plain property)
        """
    }

    /// Adds a definition, replacing one with the same name.
    @usableFromInline
    mutating func add(_ definition: ReactorDefinition) {
        definitions.removeAll { $0.name == definition.name }
        definitions.append(definition)
    }

    /// The definition registered under `name`.
    public func definition(named name: String) -> ReactorDefinition? {
        definitions.first { $0.name == name }
    }
}
