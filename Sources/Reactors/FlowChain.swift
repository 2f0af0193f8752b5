import Synchronization

/// One operator of a staged flow, as written: a transform, or how to make the running step of a
/// stateful or timed operator (`removeDuplicates`, `debounce`, …) for one runtime.
@usableFromInline
enum FlowStage<Element: Sendable>: Sendable {
    /// A map, filter or compactMap (consecutive ones fused); `nil` drops the element.
    case transform(@Sendable (Element) -> Element?)
    /// Makes the step that runs this operator for one runtime, with what it may ask of that runtime.
    case step(@Sendable (FlowEnvironment) -> any FlowStep<Element>)
    /// `debug(label)`: its step writes to the runtime's debug handler.
    case debug(String)
}

/// What happened to an element a step (or a whole chain) was given.
@usableFromInline
enum FlowOutcome<Element: Sendable>: Sendable {
    /// It goes on, possibly changed.
    case passed(Element)
    /// It was dropped: nothing comes of it.
    case dropped
    /// A timed step holds it; it goes on later, from that step's hold task, or is dropped then.
    case held
}

/// Whose element a step was given: the action it belongs to (nil for a merged source's element or a
/// start element) and where that action's completion waits (the runtime's, opaque here), so a held
/// element keeps the action unfinished.
@usableFromInline
struct FlowTicket: Sendable {
    @usableFromInline var seq: UInt64?
    @usableFromInline var outcome: (any AnyObject & Sendable)?

    @inlinable init(seq: UInt64?, outcome: (any AnyObject & Sendable)?) {
        self.seq = seq
        self.outcome = outcome
    }
}

/// The task that holds one element for a timed step, as the step sees it (the runtime's effect token).
@usableFromInline
protocol FlowHold: AnyObject, Sendable {
    /// The ticket of the element it holds, for the rest of the chain once released.
    var ticket: FlowTicket { get }
    /// Set once cancelled: the element is dropped.
    var isCancelled: Bool { get }
    /// Cancels the task; the element is dropped.
    func cancel()
}

/// What a step may ask of the runtime running it.
@usableFromInline
struct FlowEnvironment: Sendable {
    /// Starts a task that holds an element for `ticket`'s action: it counts as one of that action's
    /// effects (its completion waits, `stop()` and stub mode cancel it, `waitForEffects` waits for it).
    /// Nil when the runtime is stopped.
    let hold:
        @Sendable (
            _ ticket: FlowTicket, _ body: @escaping @Sendable (any FlowHold) async throws -> Void
        ) -> (any FlowHold)?
    /// Writes one line of `debug(_:)`.
    let debug: @Sendable (FlowDebugLine) -> Void
}

/// The running form of one stateful or timed operator. `receive` is called from the draining thread and
/// from merged sources' tasks alike, so a step guards its state itself.
@usableFromInline
protocol FlowStep<Element>: Sendable {
    associatedtype Element: Sendable
    /// Takes one element; a step that holds it continues it later with `position.resume`.
    func receive(_ element: Element, _ ticket: FlowTicket, _ position: FlowPosition<Element>) -> FlowOutcome<Element>
    /// The runtime started its flows (before any start element).
    func start()
    /// The runtime stopped; held elements were cancelled with its effects.
    func stop()
}

extension FlowStep {
    func start() {}
    func stop() {}
}

/// Where a step sits in its chain, for continuing an element it held.
@usableFromInline
struct FlowPosition<Element: Sendable>: Sendable {
    let chain: FlowChain<Element>
    /// The index of the step after this one.
    let next: Int

    /// Runs `element`, released by the hold task `hold`, through the rest of the chain and hands it to the
    /// runtime if it passes.
    func resume(_ element: Element, hold: any FlowHold) async {
        await chain.resume(element, at: next, hold: hold)
    }
}

/// A staged flow running for one runtime: its transforms and steps in order, and where a released element goes.
@usableFromInline
final class FlowChain<Element: Sendable>: Sendable {
    @usableFromInline
    enum Link: Sendable {
        case transform(@Sendable (Element) -> Element?)
        case step(any FlowStep<Element>)
    }

    @usableFromInline let links: [Link]
    /// Hands an element a held step released, having passed the rest of the chain, to the runtime.
    let sink: @Sendable (Element, any FlowHold) async -> Void

    init(
        _ stages: [FlowStage<Element>], environment: FlowEnvironment,
        sink: @escaping @Sendable (Element, any FlowHold) async -> Void
    ) {
        links = stages.map { stage in
            switch stage {
            case .transform(let body): .transform(body)
            case .step(let make): .step(make(environment))
            case .debug(let label): .step(DebugStep<Element>(label: label, write: environment.debug))
            }
        }
        self.sink = sink
    }

    /// Runs `element` through the links from `index` on.
    @usableFromInline
    func enter(_ element: Element, at index: Int, _ ticket: FlowTicket) -> FlowOutcome<Element> {
        var element = element
        var index = index
        while index < links.count {
            switch links[index] {
            case .transform(let body):
                guard let next = body(element) else { return .dropped }
                element = next
            case .step(let step):
                switch step.receive(element, ticket, FlowPosition(chain: self, next: index + 1)) {
                case .passed(let next): element = next
                case .dropped: return .dropped
                case .held: return .held
                }
            }
            index += 1
        }
        return .passed(element)
    }

    /// Continues an element released by the hold task `hold` from `index`, handing it on if it passes.
    func resume(_ element: Element, at index: Int, hold: any FlowHold) async {
        if hold.isCancelled { return }
        if case .passed(let passed) = enter(element, at: index, hold.ticket) { await sink(passed, hold) }
    }

    /// Tells every step the runtime started its flows.
    func start() {
        for case .step(let step) in links { step.start() }
    }

    /// Tells every step the runtime stopped.
    func stop() {
        for case .step(let step) in links { step.stop() }
    }
}
