import Synchronization

extension Flow {
    /// Drops an element equal to the last one that passed here (RxSwift's `distinctUntilChanged`), own
    /// and merged so far alike: a button tapped twice, or the same query typed again, runs once.
    public func removeDuplicates(
        by isDuplicate: @escaping @Sendable (_ previous: Element, _ next: Element) -> Bool
    ) -> Flow {
        appending(.step { _ in RemoveDuplicatesStep(isDuplicate) })
    }
}

extension Flow where Element: Equatable {
    /// Drops an element equal (`==`) to the last one that passed here (RxSwift's `distinctUntilChanged()`).
    public func removeDuplicates() -> Flow {
        removeDuplicates(by: ==)
    }
}

/// The running `removeDuplicates`: the last element that passed, under its own lock.
final class RemoveDuplicatesStep<Element: Sendable>: FlowStep {
    let isDuplicate: @Sendable (Element, Element) -> Bool
    let last = Mutex<Element?>(nil)

    init(_ isDuplicate: @escaping @Sendable (Element, Element) -> Bool) { self.isDuplicate = isDuplicate }

    func receive(_ element: Element, _ ticket: FlowTicket, _ position: FlowPosition<Element>) -> FlowOutcome<Element> {
        last.withLock { last in
            if let previous = last, isDuplicate(previous, element) { return .dropped }
            last = element
            return .passed(element)
        }
    }
}
