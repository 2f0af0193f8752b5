import ReactorClient
import Synchronization

/// Iterates a client sequence in its own task and records what it yields, so a test can wait (bounded) for
/// what it expects and then cancel the iteration as an app would.
final class SequenceRecorder<Element: Sendable>: Sendable {
    struct Recording: Sendable, CustomStringConvertible {
        var elements: [Element] = []
        var finished = false
        var error: ReactorClientError?
        var description: String { "\(elements)\(finished ? " (finished\(error.map { ": \($0)" } ?? ""))" : "")" }
    }

    let recording = Observed(Recording())
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Records a sequence that never throws.
    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element, S.Failure == Never {
        let recording = recording
        task.withLock {
            $0 = Task {
                for await element in sequence { recording.update { $0.elements.append(element) } }
                recording.update { $0.finished = true }
            }
        }
    }

    /// Records a sequence that throws the client's error.
    init<S: AsyncSequence & Sendable>(throwing sequence: S)
    where S.Element == Element, S.Failure == ReactorClientError {
        let recording = recording
        task.withLock {
            $0 = Task {
                do throws(ReactorClientError) {
                    for try await element in sequence { recording.update { $0.elements.append(element) } }
                    recording.update { $0.finished = true }
                } catch {
                    recording.update {
                        $0.error = error
                        $0.finished = true
                    }
                }
            }
        }
    }

    deinit {
        cancel()
    }

    /// What was recorded so far.
    var elements: [Element] { recording.value.elements }

    /// Waits (bounded) until the recorded elements satisfy `condition`.
    @discardableResult
    func wait(_ what: String, until condition: @escaping @Sendable ([Element]) -> Bool) async throws -> [Element] {
        try await recording.wait(what) { condition($0.elements) }.elements
    }

    /// Waits (bounded) until the sequence ended.
    @discardableResult
    func waitUntilFinished(_ what: String) async throws -> Recording {
        try await recording.wait(what) { $0.finished }
    }

    /// Cancels the iterating task, as leaving a `for await` would.
    func cancel() {
        task.withLock { $0?.cancel() }
    }
}
