/// The resident sessions by id (``SessionStore``'s, under its lock), with the one found last: a client acting on
/// one session looks the same id up on every request, and a hit compares the id instead of hashing it (~300
/// instructions per POST, measured). Every change of an id's entry forgets it as the one found last, so a
/// lookup never returns a session the table no longer holds.
struct SessionTable {
    private var byID: [String: any PersistentSession] = [:]
    /// The id found last, and its session (nil: none).
    private var lastID = ""
    private var last: (any PersistentSession)?

    /// The session under `id`, or nil; setting replaces or removes it.
    subscript(id: String) -> (any PersistentSession)? {
        get { byID[id] }
        set {
            forget(id)
            byID[id] = newValue
        }
    }

    /// The session under `id`, remembered as the one found last (the request path's lookup).
    mutating func find(_ id: String) -> (any PersistentSession)? {
        if let last, id == lastID { return last }
        guard let found = byID[id] else { return nil }
        lastID = id
        last = found
        return found
    }

    /// Removes and returns the session under `id`.
    @discardableResult
    mutating func removeValue(forKey id: String) -> (any PersistentSession)? {
        forget(id)
        return byID.removeValue(forKey: id)
    }

    /// How many sessions are resident.
    var count: Int { byID.count }
    /// The resident sessions, in no order.
    var values: Dictionary<String, any PersistentSession>.Values { byID.values }
    /// The ids of the resident sessions for which `isIncluded` holds.
    func ids(where isIncluded: (any PersistentSession) -> Bool) -> [String] {
        byID.filter { isIncluded($0.value) }.map(\.key)
    }

    /// Drops the session found last if it is `id`'s.
    private mutating func forget(_ id: String) {
        if last != nil, id == lastID {
            last = nil
            lastID = ""
        }
    }
}
