import JSONCodec

/// Creating, updating, inspecting, purging and deleting streams.
extension JetStream {
    /// Creates the stream, or updates it when it exists with another configuration; with the same
    /// configuration this changes nothing (safe to call on every start).
    public func createOrUpdateStream(_ config: StreamConfig) async throws(NATSError) -> StreamInfo {
        do {
            return StreamInfo(try await request("STREAM.CREATE.\(config.name)", body: config.json))
        } catch .jetStream(let error) where error.errorCode == JetStreamAPIError.streamNameInUse {
            return StreamInfo(try await request("STREAM.UPDATE.\(config.name)", body: config.json))
        }
    }

    /// The stream's configuration and state, or nil if there is no such stream.
    public func streamInfo(_ name: String) async throws(NATSError) -> StreamInfo? {
        do {
            return StreamInfo(try await request("STREAM.INFO.\(name)", body: nil))
        } catch .jetStream(let error) where error.errorCode == JetStreamAPIError.streamNotFound {
            return nil
        }
    }

    /// Deletes the stream and its messages; false if there was no such stream.
    @discardableResult
    public func deleteStream(_ name: String) async throws(NATSError) -> Bool {
        do {
            return try await request("STREAM.DELETE.\(name)", body: nil)["success"]?.boolValue ?? false
        } catch .jetStream(let error) where error.errorCode == JetStreamAPIError.streamNotFound {
            return false
        }
    }

    /// Removes the stream's messages: all of them, or only those on `subject` (wildcards allowed),
    /// keeping the newest `keep` if given, or only those before sequence `before` if given. Returns
    /// how many were removed.
    @discardableResult
    public func purgeStream(_ name: String, subject: String? = nil, keep: UInt64? = nil, before: UInt64? = nil)
        async throws(NATSError) -> UInt64
    {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void) throws(NATSError) in
            try purgeStream(name, subject: subject, keep: keep, before: before, completion: completion)
        }
    }

    /// Purges as ``purgeStream(_:subject:keep:before:)`` does and calls `completion` (on the
    /// connection's thread) with how many messages were removed.
    public func purgeStream(
        _ name: String, subject: String? = nil, keep: UInt64? = nil, before: UInt64? = nil,
        completion: @escaping @Sendable (Result<UInt64, NATSError>) -> Void
    ) throws(NATSError) {
        var fields: [(String, JSONValue)] = []
        if let subject { fields.append(("filter", .string(subject))) }
        if let keep { fields.append(("keep", .number(.uint(keep)))) }
        if let before { fields.append(("seq", .number(.uint(before)))) }
        try request("STREAM.PURGE.\(name)", body: fields.isEmpty ? nil : .object(JSONObject(fields))) { result in
            completion(result.map { $0.uint64("purged") ?? 0 })
        }
    }

    /// Account-level JetStream information (`$JS.API.INFO`): answers only once JetStream is ready.
    public func accountInfo() async throws(NATSError) -> JSONValue {
        try await request("INFO", body: nil)
    }
}
