import HTTPServer
import JSONCodec
import Tokens

extension ReactorService {
    /// `GET /events?sessions=a,b,c[&select=/pointer][&delta=json-patch]`: the events of several sessions over one
    /// stream (API.md "Many sessions over one stream"). The request is refused as a whole only for what is wrong
    /// with it (400), with its JWT (401, in jwt mode) or for the subscriber limits (503); a session that
    /// cannot be followed ends its own part: `unauthorized` (no or a wrong token, or not covered by the JWT;
    /// in token mode also an unknown id, so ids cannot be probed), `unknown_session`, `session_unavailable`.
    ///
    /// Each part counts as one subscriber of its session (`sse.maxSubscribersPerSession`) and of the
    /// server (`sse.maxSubscribers`): a stream that would pass either limit is refused with 503.
    func subscribeMany(_ exchange: Exchange) {
        let ids: [String]
        let select: (pointer: JSONPointer, text: String)?
        let patches: Bool
        do {
            ids = try streamedSessions(exchange)
            select = try Self.select(exchange)
            patches = try Self.patches(exchange)
        } catch {
            return exchange.fail(error)
        }
        let granted = grantedParts(ids, exchange)
        let starts = partStarts(ids, granted: granted)
        // One per part that subscribes, in order; given back as each part leaves its session.
        let holds: [AddressQuota.Hold]
        do {
            let subscribing = try subscribersAdded(ids, starts)
            holds = try holdSubscribers(subscribing, for: exchange)
        } catch {
            return exchange.fail(error)
        }
        if exchange.request.method == .HEAD { return Self.answerHead(exchange) }
        guard let writer = exchange.writer else { return exchange.fail(.notFound(exchange.request.path)) }
        let stream = openStream(ids, starts, select: select, patches: patches, exchange: exchange, writer: writer)
        startParts(of: stream, ids, starts, holds: holds)
        let tokens = zip(ids, granted).compactMap { id, part in part.matched.map { (id: id, matched: $0) } }
        endWhenCredentialLapses(stream, tokens: tokens, exchange)
        exchange.finished(200)
    }

    /// How each part starts: following its session, ended at once (no access, an unknown or quarantined session),
    /// or failed (a session whose first state could not be stored). Touches each session followed.
    func partStarts(_ ids: [String], granted: [(granted: Bool, matched: SessionTokenHash?)]) -> [PartStart] {
        let now = context.clock.monotonicNanoseconds()
        var starts: [PartStart] = []
        starts.reserveCapacity(ids.count)
        for (id, allowed) in zip(ids, granted) {
            guard allowed.granted else {
                starts.append(.end(ServerSentEventVocabulary.unauthorized))
                continue
            }
            guard let session = streamedSession(id) else {
                starts.append(PartStart(absence: store.absence(id)))
                continue
            }
            session.touch(at: now)
            // Its first state would hold up every part after it, waiting for records never written.
            if let unstored = unstored(id, at: session.storedPosition) {
                starts.append(.fail(unstored))
                continue
            }
            starts.append(.subscribe(session))
        }
        return starts
    }

    /// How many subscribers the stream adds, one per part that follows its session; 503 when a session or the
    /// server would pass its limit (`sse.maxSubscribersPerSession`, `sse.maxSubscribers`). Counted without a lock,
    /// as for one session's stream.
    func subscribersAdded(_ ids: [String], _ starts: [PartStart]) throws(APIError) -> Int {
        let limits = configuration.sse
        var subscribing = 0
        for (id, start) in zip(ids, starts) {
            guard case .subscribe(let session) = start else { continue }
            subscribing += 1
            if session.subscriberCount >= limits.maxSubscribersPerSession {
                throw .tooManySubscribers(
                    "session \(JSONWriter.quoted(id)) has its limit of \(limits.maxSubscribersPerSession) "
                        + "subscribers (sse.maxSubscribersPerSession)")
            }
        }
        if subscribing > 0, metrics.subscribers.value + subscribing > limits.maxSubscribers {
            throw .tooManySubscribers(
                "the server has its limit of \(limits.maxSubscribers) subscribers (sse.maxSubscribers); "
                    + "this stream would add \(subscribing)")
        }
        return subscribing
    }

    /// The stream, resuming from the request's cursor, attached to the connection.
    func openStream(
        _ ids: [String], _ starts: [PartStart], select: (pointer: JSONPointer, text: String)?, patches: Bool,
        exchange: Exchange, writer: HTTPResponseWriter
    ) -> MultiplexedEventStream {
        let cursor = exchange.request.headers["Last-Event-ID"].flatMap { StreamCursor($0.trimmed, sessions: ids) }
        // Only of the parts that follow their session: the cursor must not tell a refused id exists.
        let incarnations = zip(ids, starts).map { id, start -> UInt64 in
            guard case .subscribe = start else { return 0 }
            return store.incarnation(of: id)
        }
        let stream = MultiplexedEventStream(
            sessions: ids, incarnations: incarnations, resumingFrom: cursor, select: select?.pointer,
            selectText: select?.text, patches: patches)
        stream.attach(writer.startEventStream(headers: exchange.eventStreamHeaders) { stream.handle($0) })
        return stream
    }

    /// Subscribes each following part to its session (loaded again if it was passivated meanwhile) with its
    /// subscriber hold; ends or fails the others.
    func startParts(
        of stream: MultiplexedEventStream, _ ids: [String], _ starts: [PartStart], holds: consuming [AddressQuota.Hold]
    ) {
        for (index, start) in starts.enumerated() {
            switch start {
            case .subscribe(let session):
                let id = ids[index]
                let current = session.isPassivated ? store.session(id) ?? session : session
                stream.subscribe(index, to: current, hold: holds.popLast()) { [weak self] in self?.streamedSession(id) }
            case .end(let reason):
                stream.end(index, reason: reason)
            case .fail(let error):
                stream.fail(index, code: error.code, message: error.message)
            }
        }
    }

    /// The ids of `sessions=`: 1 to `sse.maxSessionsPerStream` valid ids, none twice (else 400).
    func streamedSessions(_ exchange: Exchange) throws(APIError) -> [String] {
        guard let list = try exchange.soleQueryValue("sessions", .invalidSessions), !list.isEmpty else {
            throw APIError(.invalidSessions, "name the sessions to follow: GET /events?sessions=a,b,c")
        }
        let ids = list.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let limit = configuration.sse.maxSessionsPerStream
        guard ids.count <= limit else {
            throw APIError(
                .invalidSessions,
                "a stream follows at most \(limit) sessions (sse.maxSessionsPerStream); this one names \(ids.count): "
                    + "open several streams")
        }
        var seen = Set<String>()
        for id in ids {
            guard SessionID.isValid(id) else {
                throw APIError(
                    .invalidID,
                    "a session id is 1 to 64 characters from A-Z, a-z, 0-9, _ and -; sessions= holds "
                        + "\(JSONWriter.quoted(String(id.prefix(80))))")
            }
            guard seen.insert(id).inserted else {
                throw APIError(.invalidSessions, "session \(JSONWriter.quoted(id)) is named twice in sessions=")
            }
        }
        return ids
    }

    /// Whether the request may read each session, as the access mode checks one session's stream: anyone
    /// (open); the session's own token, the tokens of `access_token=t1,t2,…` taken in the order of the ids
    /// (token, with the stored hash the token matched); the JWT the access middleware verified, granting
    /// `read` on that session (jwt).
    func grantedParts(_ ids: [String], _ exchange: Exchange) -> [(granted: Bool, matched: SessionTokenHash?)] {
        switch access {
        case .open:
            return ids.map { _ in (true, nil) }
        case .token:
            // Tokens that cannot be read (access_token given twice, differently) grant no part.
            let presented = (try? BearerCredential.presented(by: exchange.request)) ?? nil
            let tokens = presented?.split(separator: ",", omittingEmptySubsequences: false) ?? []
            return ids.enumerated().map { index, id in
                let token = index < tokens.count && !tokens[index].isEmpty ? String(tokens[index]) : nil
                let stored = store.accessTokenHash(for: id)
                // Checked against a decoy for an unknown id, with the same work: the answer is the same.
                return SessionTokenHash.verify(presented: token, against: stored) ? (true, stored) : (false, nil)
            }
        case .jwt:
            guard let claims = exchange.claims else { return ids.map { _ in (false, nil) } }
            return ids.map { (claims.refusal(right: .read, sessionID: $0) == nil, nil) }
        }
    }
}

/// How one part of a multiplexed stream starts.
enum PartStart {
    /// Subscribe it to this session.
    case subscribe(any SessionStreamSource)
    /// End it at once with this reason.
    case end(String)
    /// End it at once with an error (the session cannot be read right now).
    case fail(APIError)

    /// The start of a part whose session the store does not have: why, as its `end` reason or error.
    init(absence: SessionError) {
        let error = APIError(absence)
        switch error.kind {
        case .unknownSession, .sessionUnavailable: self = .end(error.code)
        default: self = .fail(error)
        }
    }
}
