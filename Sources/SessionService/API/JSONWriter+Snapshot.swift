import JSONCodec

extension JSONWriter {
    /// `"version":V,"state":{…}` members of a snapshot (callers add the braces and other members).
    public mutating func snapshotMembers(_ snapshot: EncodedSnapshot) {
        raw("\"version\":")
        integer(snapshot.version)
        raw(",\"state\":")
        raw(snapshot.state)
    }
}
