/// The stream of actions or mutations a reactor's `transform` hooks shape with ReactorKit's (RxSwift's)
/// vocabulary: map or filter the reactor's own elements, merge other sources (a `SharedValue`'s values for
/// global state), start with elements, drop repeats, debounce or throttle on a clock, switch to the latest
/// action's effects, and log what passes.
///
/// ```swift
/// func transform(action: Flow<Action>) -> Flow<Action> {
///     action.debounce(for: .milliseconds(300), clock: clock).removeDuplicates().flatMapLatest().debug("action")
/// }
/// func transform(mutation: Flow<Mutation>) -> Flow<Mutation> {
///     mutation.merge(with: session.currentUser.values.map { Mutation.setUser($0) })
/// }
/// ```
/// The runtime builds the flow once, when it starts; merged sources run until the runtime stops, and a
/// source that throws is reported and ends only that source. Operators apply in the order written, to the
/// reactor's own elements and to those merged or started before them (as RxSwift's operators do to the
/// stream they are called on).
public struct Flow<Element: Sendable>: Sendable {
    /// Feeds every element of one merged source to `yield`.
    @usableFromInline typealias Source =
        @Sendable (_ yield: @escaping @Sendable (Element) async -> Void) async throws -> Void

    /// Applied to each of the reactor's own elements before any stage; `nil` drops the element.
    @usableFromInline var transform: (@Sendable (Element) -> Element?)?
    /// Sources merged before the first stage, each already carrying the transforms applied after it was
    /// merged; they enter the stages at the first one.
    @usableFromInline var sources: [Source]
    /// The steps after `transform`, in order, once a stateful or timed operator (or `startWith`) was used:
    /// from then on every operator is a stage, so that elements entering later skip the earlier ones.
    @usableFromInline var stages: [FlowStage<Element>]
    /// Sources merged after the first stage, each entering at the stage that followed it.
    @usableFromInline var stagedSources: [(entry: Int, source: Source)]
    /// Elements emitted when the runtime starts, in order, each entering at the stage that followed it.
    @usableFromInline var starts: [(entry: Int, element: Element)]
    /// Set by `flatMapLatest()`: an action that reaches `mutate` cancels the effects of the previous one.
    @usableFromInline var switchesToLatest: Bool

    /// The identity flow, as handed to the `transform` hooks.
    @inlinable public init() {
        transform = nil
        sources = []
        stages = []
        stagedSources = []
        starts = []
        switchesToLatest = false
    }

    /// True when the flow changes nothing, so the runtime can skip it entirely.
    @inlinable var isIdentity: Bool { transform == nil && sources.isEmpty && !hasStages }

    /// True when the flow needs the runtime's flow machinery: stages, start elements or `flatMapLatest`.
    @inlinable var hasStages: Bool { !stages.isEmpty || !stagedSources.isEmpty || !starts.isEmpty || switchesToLatest }

    /// True once operators are stages (see `stages`).
    @usableFromInline var isStaged: Bool { !stages.isEmpty || !starts.isEmpty }

    /// Drops the elements (own and merged so far) for which `isIncluded` is false, and transforms the rest.
    @inlinable public func compactMap(_ body: @escaping @Sendable (Element) -> Element?) -> Flow {
        var flow = self
        if isStaged {
            flow.appendTransform(body)
            return flow
        }
        if let previous = transform {
            flow.transform = { previous($0).flatMap(body) }
        } else {
            flow.transform = body
        }
        flow.sources = sources.map { source in
            { yield in try await source { element in if let mapped = body(element) { await yield(mapped) } } }
        }
        return flow
    }

    /// Transforms every element (own and merged so far).
    @inlinable public func map(_ body: @escaping @Sendable (Element) -> Element) -> Flow {
        compactMap { body($0) }
    }

    /// Keeps only the elements (own and merged so far) for which `isIncluded` is true.
    @inlinable public func filter(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> Flow {
        compactMap { isIncluded($0) ? $0 : nil }
    }

    /// Adds the elements of `source` to the flow, as ReactorKit's `Observable.merge(mutation, global)`.
    public func merge<S: AsyncSequence & Sendable>(with source: S) -> Flow where S.Element == Element {
        var flow = self
        let feed: Source = { yield in
            for try await element in source {
                await yield(element)
            }
        }
        if isStaged {
            flow.stagedSources.append((stages.count, feed))
        } else {
            flow.sources.append(feed)
        }
        return flow
    }

    /// Emits `elements`, in order, before anything else, when the runtime starts from its initial state
    /// (RxSwift's `startWith`): an action is numbered and run like a sent one, a mutation is reduced.
    /// A runtime restored from a checkpoint continues a flow that already started: nothing is emitted again.
    /// Operators after this one apply to them; those before do not.
    public func startWith(_ elements: Element...) -> Flow {
        var flow = self
        // A later startWith emits first, as in RxSwift: `a.startWith(1).startWith(2)` is 2, 1, a…
        flow.starts.insert(contentsOf: elements.map { (stages.count, $0) }, at: 0)
        return flow
    }

    /// RxSwift's `flatMapLatest` applied to `mutate`: each action that reaches `mutate` cancels whatever the
    /// previous one started and is still running (its `run`, `delay` and `cancellable` tasks), as a new
    /// search replaces the one in flight. Mutations already reduced stay. Meant for `transform(action:)`;
    /// a mutation flow has no effects to cancel, so there it changes nothing.
    public func flatMapLatest() -> Flow {
        var flow = self
        flow.switchesToLatest = true
        return flow
    }

    /// Adds a stage after the existing ones (the flow is staged from now on).
    func appending(_ stage: FlowStage<Element>) -> Flow {
        var flow = self
        flow.stages.append(stage)
        return flow
    }

    /// Adds a transform stage, fused into the last one when nothing enters between them.
    @usableFromInline
    mutating func appendTransform(_ body: @escaping @Sendable (Element) -> Element?) {
        let here = stages.count
        let entersHere = stagedSources.contains { $0.entry == here } || starts.contains { $0.entry == here }
        if !entersHere, case .transform(let previous)? = stages.last {
            stages[stages.count - 1] = .transform { previous($0).flatMap(body) }
        } else {
            stages.append(.transform(body))
        }
    }
}
