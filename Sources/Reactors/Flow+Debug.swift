extension Flow {
    /// Logs every element that passes here, and when the flow starts and stops, under `label` (RxSwift's
    /// `debug`, as ReactorKit's README writes `action.debug("action")`). The runtime writes the lines to
    /// its debug handler (`ReactorRuntime.setDebugHandler`; a hosted session logs them with its id), or
    /// to standard error when it has none. The label defaults to the file and line that called it.
    ///
    /// ```swift
    /// func transform(action: Flow<Action>) -> Flow<Action> { action.debug("action") }
    /// // action -> started, action -> next(increase), …, action -> stopped
    /// ```
    public func debug(_ label: String? = nil, fileID: String = #fileID, line: Int = #line) -> Flow {
        let label = label ?? "\(fileID):\(line)"
        return appending(.debug(label))
    }
}

/// One line `Flow.debug(_:)` writes: which flow (its label) and what happened.
public struct FlowDebugLine: Sendable, Equatable, CustomStringConvertible {
    /// What the flow did.
    public enum Event: Sendable, Equatable {
        /// The runtime started the flow (RxSwift's "subscribed").
        case started
        /// An element passed, as `String(describing:)` shows it.
        case next(String)
        /// The runtime stopped (RxSwift's "isDisposed").
        case stopped
    }

    /// The label given to `debug(_:)`.
    public var label: String
    /// What happened.
    public var event: Event

    /// Describes one event of the flow labelled `label`.
    public init(label: String, event: Event) {
        self.label = label
        self.event = event
    }

    /// `label -> next(element)`, as RxSwift prints it.
    public var description: String {
        switch event {
        case .started: "\(label) -> started"
        case .next(let element): "\(label) -> next(\(element))"
        case .stopped: "\(label) -> stopped"
        }
    }
}

/// The running `debug`: writes a line per element and at start and stop.
struct DebugStep<Element: Sendable>: FlowStep {
    let label: String
    let write: @Sendable (FlowDebugLine) -> Void

    func receive(_ element: Element, _ ticket: FlowTicket, _ position: FlowPosition<Element>) -> FlowOutcome<Element> {
        write(FlowDebugLine(label: label, event: .next(String(describing: element))))
        return .passed(element)
    }

    func start() { write(FlowDebugLine(label: label, event: .started)) }

    func stop() { write(FlowDebugLine(label: label, event: .stopped)) }
}
