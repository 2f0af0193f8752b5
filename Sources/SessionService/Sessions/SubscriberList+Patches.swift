import JSONCodec

// Patches (`?delta=json-patch`): a subscriber that holds the version before the latest gets the RFC 6902 patch
// from it instead of the whole state. The patch is made once per version (and per `select` pointer) from the
// value of the version before, which the cache keeps, and shared by every subscriber that needs it.
extension SubscriberList {
    /// The patch of the whole state to the latest version for `subscriber`, looked up once per fan-out; nil when
    /// it gets the whole state (its first, after a skip, or no value of the version before).
    @inline(__always)
    mutating func patchEvent(
        _ latest: inout Latest, for subscriber: Subscriber, reporting: Reporting
    ) -> Unmanaged<SessionEvent>? {
        guard let base = subscriber.patchBase, base &+ 1 == latest.version else { return nil }
        if let patch = latest.patch { return patch }
        guard !latest.patchLookedUp else { return nil }
        latest.patchLookedUp = true
        guard let made = statePatch(latest, reporting: reporting) else { return nil }
        latest.patch = Unmanaged.passUnretained(made)
        return latest.patch
    }

    /// The patch of the whole state from the version before the latest, made once per version.
    mutating func statePatch(_ latest: Latest, reporting: Reporting) -> SessionEvent? {
        let cache = cache(latest.version)
        if cache.patchTried { return cache.patch }
        cache.patchTried = true
        guard let previous = cache.previous, previous.version &+ 1 == latest.version,
            let value = stateValue(latest)
        else { return nil }
        let json = Self.patchJSON(from: previous.value, to: value) { stateEvent(latest)?.json }
        cache.patch = SessionEvent(.patch(version: latest.version), json: json, position: latest.position)
        reporting.context.metrics.statePatches.increment()
        return cache.patch
    }

    /// The patch of the value at `pointer` to the latest version for `subscriber`, made once per version and
    /// pointer; nil when it gets the whole selected value.
    mutating func selectedPatch(
        _ latest: Latest, at pointer: JSONPointer, for subscriber: Subscriber, reporting: Reporting
    ) -> SessionEvent? {
        guard let base = subscriber.patchBase, base &+ 1 == latest.version else { return nil }
        let cache = cache(latest.version)
        if let made = cache.selectedPatches.first(where: { $0.pointer == pointer }) { return made.event }
        var event: SessionEvent?
        if let previous = cache.previous, previous.version == base, let value = stateValue(latest) {
            let selected = value[pointer] ?? .null
            let json = Self.patchJSON(from: previous.value[pointer] ?? .null, to: selected) { selected.serialized() }
            event = SessionEvent(.patch(version: latest.version), json: json, position: latest.position)
            reporting.context.metrics.statePatches.increment()
        }
        cache.selectedPatches.append((pointer, event))
        return event
    }

    /// After `subscriber` took the latest version: it holds that version's state now, and the value of that
    /// version is kept (made now if no one needed it), for the patch to the next version.
    mutating func holdPatchBase(_ latest: Latest, for subscriber: Subscriber) {
        subscriber.patchBase = latest.version
        if subscriber.select == nil { _ = stateValue(latest) }
    }

    /// `count` subscribers that asked for patches left; after the last, the value of the version before is let go
    /// (a large state's value takes many times the memory of its JSON).
    mutating func patchesEnded(count: Int = 1) {
        patchSubscribers -= count
        if patchSubscribers == 0 { cache?.previous = nil }
    }

    /// The patch from `old` to `new` as JSON; one `replace` of the whole when that is shorter, which happens
    /// only for patches of many operations (`whole` is the new value's JSON, made only then).
    static func patchJSON(from old: JSONValue, to new: JSONValue, whole: () -> [UInt8]?) -> [UInt8] {
        let patch = old.patch(to: new)
        let json = patch.serialized()
        guard case .array(let operations) = patch, operations.count > 8, let whole = whole(),
            whole.count + replaceWhole.count + 2 < json.count
        else { return json }
        var replacing = replaceWhole
        replacing.reserveCapacity(replaceWhole.count + whole.count + 2)
        replacing.append(contentsOf: whole)
        replacing.append(contentsOf: Array("}]".utf8))
        return replacing
    }

    /// The start of a patch that replaces the whole document.
    static let replaceWhole = Array(#"[{"op":"replace","path":"","value":"#.utf8)
}
