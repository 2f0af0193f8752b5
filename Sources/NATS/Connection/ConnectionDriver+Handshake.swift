import JSONCodec
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// Reaching one server: TCP connect, `INFO`, `CONNECT` + `PING`, and its `PONG`, all within
/// ``NATSOptions/connectTimeout``.
extension ConnectionDriver {
    /// Connects to `server`; on success the connection is live and its first output (the
    /// subscriptions, then whatever was queued meanwhile) is ready to write. With `wanted`, a server whose `INFO`
    /// gives another name is left at once (false).
    func establish(_ server: NATSServerAddress, named wanted: String? = nil) throws(NATSError) -> Bool {
        self.server = server
        let deadline = ContinuousClock.now + options.connectTimeout
        try openSocket(to: server, until: deadline)
        parser = ServerOutputParser(
            limits: NATSParserLimits(maxControlLineBytes: options.maxControlLineBytes, maxPayloadBytes: 1024 * 1024))

        guard case .info(var info) = try nextOperation(until: deadline, waitingFor: "INFO") else {
            throw NATSError.protocolViolation(
                server: server.description,
                violation: NATSProtocolViolation(.unknownOperation, "the server did not start with INFO"))
        }
        if let wanted, info.serverName != wanted {
            closeSocket()
            return false
        }
        guard !info.tlsRequired else { throw NATSError.tlsRequired(server: server.description) }
        parser.limits.maxPayloadBytes = info.maxPayload

        var hello: [UInt8] = []
        ClientCommand.connect(connectJSON(for: server), into: &hello)
        ClientCommand.ping(into: &hello)
        try writeAll(hello, until: deadline)
        waiting: while true {
            switch try nextOperation(until: deadline, waitingFor: "PONG") {
            case .pong: break waiting
            case .ping:
                var pong: [UInt8] = []
                ClientCommand.pong(into: &pong)
                try writeAll(pong, until: deadline)
            case .error(let text): throw refusal(text)
            case .info(let update):
                info = update
                parser.limits.maxPayloadBytes = info.maxPayload
            case .ok, .message, .skipped: continue
            }
        }
        written = 0
        pingsOutstanding = 0
        logger.info(
            "NATS connected",
            [
                "server": .string(server.description), "server_name": .string(info.serverName),
                "version": .string(info.version), "jetstream": .bool(info.jetStream),
            ])
        writing = connection.didConnect(to: server, info: info)
        return true
    }

    /// Tries each address of `server` until a TCP connection is made.
    private func openSocket(to server: NATSServerAddress, until deadline: ContinuousClock.Instant) throws(NATSError) {
        let addresses: [ResolvedAddress]
        do {
            addresses = try Posix.resolve(host: server.host, port: server.port)
        } catch {
            throw NATSError.cannotConnect(attempts: ["\(server): \(error)"])
        }
        var failure = "no address for \(server.host)"
        for address in addresses {
            do {
                socket = try Posix.tcpSocket(family: address.family)
                if case .wouldBlock = try Posix.connect(socket, to: address) {
                    guard try waitFor(socket, events: Int16(POLLOUT), until: deadline) else {
                        throw NATSError.cannotConnect(attempts: [
                            "\(server): connect timed out after \(options.connectTimeout)"
                        ])
                    }
                    let code = try Posix.socketError(socket)
                    guard code == 0 else { throw IOError(call: "connect", errno: code) }
                }
                try? Posix.setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
                return
            } catch let error as NATSError {
                closeSocket()
                if error == .closed { throw error }
                failure = error.description
            } catch {
                closeSocket()
                failure = "\(error)"
            }
        }
        throw NATSError.cannotConnect(attempts: ["\(server): \(failure)"])
    }

    /// The `CONNECT` object: no verbose acknowledgements, headers and no-responders on, credentials.
    private func connectJSON(for server: NATSServerAddress) -> [UInt8] {
        var fields: [(String, JSONValue)] = [
            ("verbose", false), ("pedantic", false), ("tls_required", false), ("name", .string(options.name)),
            ("lang", "swift"), ("version", "1.0.0"), ("protocol", 1), ("headers", true), ("no_responders", true),
            ("echo", true),
        ]
        let credentials = options.credentials(for: server)
        if let user = credentials.user {
            fields.append(("user", .string(user)))
            fields.append(("pass", .string(credentials.password ?? "")))
        } else if let token = credentials.token {
            fields.append(("auth_token", .string(token)))
        }
        return JSONValue.object(JSONObject(fields)).serialized()
    }

    /// The error a `-ERR` during the handshake stands for.
    private func refusal(_ text: String) -> NATSError {
        let lowered = text.lowercased()
        if lowered.contains("authorization") || lowered.contains("authentication") {
            return .authorizationViolation(server: server.description, message: text)
        }
        if lowered.contains("tls required") { return .tlsRequired(server: server.description) }
        return .serverError(server: server.description, message: text)
    }

    /// Writes all of `bytes` to the socket before `deadline` (handshake output is small).
    private func writeAll(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) throws(NATSError) {
        var done = 0
        while done < bytes.count {
            let result: IOResult<Int>
            do {
                result = try bytes.withUnsafeBytes { raw throws(IOError) in
                    try Posix.send(socket, UnsafeRawBufferPointer(rebasing: raw[done...]))
                }
            } catch {
                throw NATSError.cannotConnect(attempts: ["\(server): \(error)"])
            }
            switch result {
            case .processed(let count): done += count
            case .wouldBlock:
                guard try waitFor(socket, events: Int16(POLLOUT), until: deadline) else {
                    throw NATSError.cannotConnect(attempts: ["\(server): timed out writing CONNECT"])
                }
            }
        }
    }

    /// The next operation from the server, reading as needed until `deadline`.
    private func nextOperation(until deadline: ContinuousClock.Instant, waitingFor what: String) throws(NATSError)
        -> Incoming
    {
        while true {
            if let operation = try parseBuffered() { return operation }
            guard try waitFor(socket, events: Int16(POLLIN), until: deadline) else {
                throw NATSError.cannotConnect(attempts: ["\(server): no \(what) within \(options.connectTimeout)"])
            }
            if let ended = readSome() {
                throw NATSError.cannotConnect(attempts: ["\(server): \(ended) while waiting for \(what)"])
            }
        }
    }
}
