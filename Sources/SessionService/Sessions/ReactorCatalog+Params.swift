import JSONCodec
import Logs
import Reactors
import Tokens

/// Reactors whose sessions take parameters (ReactorKit's `ProfileViewReactor(userID:)`) and reach their
/// session through a ``ReactorContext``:
///
/// ```swift
/// catalog.register(
///     "profile", summary: "One user's profile.", params: ProfileReactor.Params.self,
///     exampleParams: ProfileReactor.Params(userID: 1)
/// ) { context in ProfileReactor(context: context, users: users) }
/// ```
/// `POST /sessions` then takes `"params"`, decoded as `P` (left out: decoded from `{}`); when they are missing,
/// do not decode, or are over 64 KiB as JSON, it answers 422 `invalid_params` naming the field. They are
/// stored with the session (every snapshot carries them), so a restart, a passivation, a move to another
/// instance and a fork give the reactor the same ones. `schema.params` describes them in `/openapi.json`.
extension ReactorCatalog {
    /// Adds a reactor type that takes parameters of type `P`; `make` builds the reactor of each session from
    /// its context, which carries the decoded parameters. `exampleParams` (when given) make the initial state
    /// `GET /reactors` shows and fill the page's create form.
    @inlinable
    public mutating func register<R: Reactor, P: Codable & Sendable>(
        _ name: String, summary: String = "", exampleActions: [String] = [], schema: ReactorSchema? = nil,
        params: P.Type, exampleParams: P? = nil,
        middlewares: (@Sendable (_ sessionID: String) -> [any ReactorMiddleware<R>])? = nil,
        _ make: @escaping @Sendable (ReactorContext<R, P>) -> R
    ) {
        register(
            name, summary: summary, exampleActions: exampleActions, schema: schema, params: params,
            exampleParams: exampleParams, middlewares: middlewares, make, encodeAction: nil)
    }

    /// The same for a reactor whose actions are `Encodable` (the action log keeps them encoded by code
    /// specialized for them).
    @inlinable
    public mutating func register<R: Reactor, P: Codable & Sendable>(
        _ name: String, summary: String = "", exampleActions: [String] = [], schema: ReactorSchema? = nil,
        params: P.Type, exampleParams: P? = nil,
        middlewares: (@Sendable (_ sessionID: String) -> [any ReactorMiddleware<R>])? = nil,
        _ make: @escaping @Sendable (ReactorContext<R, P>) -> R
    ) where R.Action: Encodable {
        register(
            name, summary: summary, exampleActions: exampleActions, schema: schema, params: params,
            exampleParams: exampleParams, middlewares: middlewares, make,
            encodeAction: { try JSONValueEncoder().encode($0) })
    }

    @inlinable
    mutating func register<R: Reactor, P: Codable & Sendable>(
        _ name: String, summary: String, exampleActions: [String], schema: ReactorSchema?, params: P.Type,
        exampleParams: P?, middlewares: (@Sendable (_ sessionID: String) -> [any ReactorMiddleware<R>])?,
        _ make: @escaping @Sendable (ReactorContext<R, P>) -> R, encodeAction: (@Sendable (R.Action) throws -> [UInt8])?
    ) {
        precondition(SessionID.isValid(name), "a reactor name is [A-Za-z0-9_-]{1,64}: \(name)")
        let undelivered = Pulses.undeliverable(in: R.State.self)
        precondition(undelivered.isEmpty, Self.undeliverableMessage(name, undelivered))
        // What GET /reactors shows: the example's initial state, else that of parameters decoded from `{}`.
        let shown = exampleParams ?? (try? JSONValueDecoder().decode(P.self, from: .object(JSONObject())))
        let initialState =
            shown.flatMap { params in
                try? JSONValueEncoder().encode(make(ReactorContext(sessionID: "example", params: params)).initialState)
            } ?? Array("null".utf8)
        // Where members missing from stored states come from (StoredTypes).
        let template = (try? JSONParser(maxDepth: .max, maxBytes: .max).parse(initialState)) ?? .null
        let definition = ReactorDefinition(
            name: name, summary: summary, exampleActions: exampleActions, initialState: initialState,
            storageVersion: R.storageVersion, schema: schema, hasMiddlewares: middlewares != nil, takesParams: true,
            exampleParams: exampleParams.flatMap { try? JSONValueEncoder().encode($0) },
            decodeParams: { given throws(ParamsError) in try SessionParams.decode(P.self, from: given) },
            makeSession: { id, context, accessTokenHash, params in
                let tracer = SessionCallTracer(session: id, reactor: name)
                let own = middlewares.map { made in tracer.run(.middleware) { made(id) } } ?? []
                // The service decoded them as P a moment ago (decodeParams): the cast cannot fail.
                let reactorContext = context.reactorContext(for: R.self, id: id, params: params.value as! P)
                return Session(
                    id: id, name: name, reactor: make(reactorContext), context: context,
                    accessTokenHash: accessTokenHash, middlewares: own, params: params.json, tracer: tracer,
                    attachContext: reactorContext.attach)
            },
            restoreSession: { id, context, history, journal throws(RestoreError) in
                let tracer = SessionCallTracer(session: id, reactor: name)
                // The parameter type's Decodable is the author's code, run on the session's stored data.
                let params = try tracer.run(.decodeState) { () throws(RestoreError) in
                    try SessionParams.restore(P.self, from: history.params, reactor: name)
                }
                let own = middlewares.map { made in tracer.run(.middleware) { made(id) } } ?? []
                let reactorContext = context.reactorContext(for: R.self, id: id, params: params)
                return try Session.restore(
                    id: id, name: name, reactor: make(reactorContext), template: template, context: context,
                    history: history, journal: journal, middlewares: own, tracer: tracer,
                    attachContext: reactorContext.attach)
            },
            replay: { id, history, shown throws(RestoreError) in
                let params = try SessionParams.restore(P.self, from: history.params, reactor: name)
                let reactor = make(ReactorContext(sessionID: id, params: params, logger: .discarding))
                return try Session<R>.replay(
                    reactor: reactor, id: id, name: name, template: template, history: history, shown: shown)
            },
            check: { id, history, reducing in
                let params: P
                do throws(RestoreError) {
                    params = try SessionParams.restore(P.self, from: history.params, reactor: name)
                } catch {
                    return .failure(error)
                }
                let reactor = make(ReactorContext(sessionID: id, params: params, logger: .discarding))
                return Session<R>.check(
                    reactor: reactor, id: id, name: name, template: template, history: history, reducing: reducing)
            },
            sessionType: ObjectIdentifier(Session<R>.self),
            sendAction: { session, body, completion throws(SessionError) in
                try unsafeDowncast(session as AnyObject, to: Session<R>.self)
                    .send(actionBody: body, completion: completion, encodeAction: encodeAction)
            })
        add(definition)
    }
}

extension SessionContext {
    /// The context a reactor of session `id` reaches: the server's clock for reactors (a test's injected
    /// one), and a logger writing to the server's log with the session's id.
    @usableFromInline
    func reactorContext<R: Reactor, P: Sendable>(for reactor: R.Type, id: String, params: P) -> ReactorContext<R, P> {
        ReactorContext(sessionID: id, params: params, clock: clock.clockForReactors, logger: reactorLogger(id))
    }

    /// A ``ReactorLogger`` over the server's logger, every line tagged `"session": id`.
    func reactorLogger(_ id: String) -> ReactorLogger {
        let logger = self.logger
        return ReactorLogger { level, message, fields in
            var tagged: LogFields = ["session": .string(id)]
            for (key, value) in fields.sorted(by: { $0.key < $1.key }) where key != "session" {
                tagged.append(key, .string(value))
            }
            switch level {
            case .debug: logger.debug(message, tagged)
            case .info: logger.info(message, tagged)
            case .notice: logger.notice(message, tagged)
            case .warning: logger.warning(message, tagged)
            case .error: logger.error(message, tagged)
            }
        }
    }
}
