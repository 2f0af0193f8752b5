import Foundation
import Testing

@testable import HTTPServer

typealias Machine = Connection.StateMachine

/// One event fed to a connection's state machine, as a connection would feed it.
enum MachineEvent: Sendable {
    case readable(queuedOutput: Int)
    case needMore(expectsContinue: Bool)
    case request(keepAlive: Bool = true, isHead: Bool = false)
    case rejected
    case answered(number: UInt64, closeRequested: Bool = false)
    case streamStarted(number: UInt64)
    case streamFinished
    case drained
    case peerClosed(outputPending: Bool = false, midRequest: Bool = false)
    case deadline(Machine.Deadline, midRequest: Bool = false, outputPending: Bool = false)
    case shutdown(midRequest: Bool = false, outputPending: Bool = false)
    case shutdownDeadline(midRequest: Bool = false, outputPending: Bool = false)
    case refuseAtOpen

    /// Applies the event; returns the action the machine chose, spelled out (`close(idle)`).
    func apply(to machine: inout Machine, at now: Duration = .seconds(1)) -> String {
        action(&machine, now).replacingOccurrences(of: "HTTPServer.Connection.StateMachine.CloseReason.", with: "")
            .replacingOccurrences(of: "HTTPServer.Connection.StateMachine.Refusal.", with: "")
    }

    private func action(_ machine: inout Machine, _ now: Duration) -> String {
        switch self {
        case .readable(let queued): "\(machine.readAction(queuedOutput: queued))"
        case .needMore(let expectsContinue): "\(machine.parsed(.needMore(expectsContinue: expectsContinue), at: now))"
        case .request(let keepAlive, let isHead):
            "\(machine.parsed(.request(keepAlive: keepAlive, isHead: isHead), at: now))"
        case .rejected: "\(machine.parsed(.rejected, at: now))"
        case .answered(let number, let close): "\(machine.answered(number: number, closeRequested: close, at: now))"
        case .streamStarted(let number): "\(machine.streamStarted(number: number))"
        case .streamFinished: "\(machine.streamFinished())"
        case .drained: "\(machine.outputDrained(at: now))"
        case .peerClosed(let pending, let mid): "\(machine.peerClosed(outputPending: pending, midRequest: mid))"
        case .deadline(let kind, let mid, let pending):
            "\(machine.deadlinePassed(kind, midRequest: mid, outputPending: pending))"
        case .shutdown(let mid, let pending): "\(machine.shutdownBegan(midRequest: mid, outputPending: pending))"
        case .shutdownDeadline(let mid, let pending):
            "\(machine.shutdownDeadlinePassed(midRequest: mid, outputPending: pending))"
        case .refuseAtOpen: "\(machine.refuseAtOpen(.tooManyConnections))"
        }
    }
}

/// A row of the transition table: events from a fresh connection, the last one's action, the state after.
struct Transition: CustomTestStringConvertible, Sendable {
    var name: String
    var events: [MachineEvent]
    var action: String
    var state: Machine.State
    var testDescription: String { name }

    init(_ name: String, _ events: [MachineEvent], _ action: String, _ state: Machine.State) {
        self.name = name
        self.events = events
        self.action = action
        self.state = state
    }
}

@Suite struct ConnectionStateMachineTests {
    static let transitions: [Transition] = [
        // Reading and dispatching.
        Transition("input on a fresh connection is parsed", [.readable(queuedOutput: 0)], "parse", .reading),
        Transition("a request is dispatched with its number", [.request()], "dispatch(number: 1)", .awaitingResponse),
        Transition(
            "input waits while an answer is pending", [.request(), .readable(queuedOutput: 0)], "hold",
            .awaitingResponse),
        Transition(
            "input waits while the peer is not reading its answers",
            [.readable(queuedOutput: Machine.outputHighWater + 1)], "hold", .reading),
        Transition("100 Continue is sent once", [.needMore(expectsContinue: true)], "sendContinue", .reading),
        Transition(
            "... and not again", [.needMore(expectsContinue: true), .needMore(expectsContinue: true)], "readMore",
            .reading),
        Transition("a rejected request is refused, then closed", [.rejected], "refuse", .closing),
        Transition(
            "a refusal's bytes written, the write side shuts", [.rejected, .drained], "halfClose(endingStream: false)",
            .lingering),

        // Answers.
        Transition(
            "a keep-alive answer resumes reading", [.request(), .answered(number: 1)],
            "write(keepAlive: true, isHead: false)", .reading),
        Transition(
            "a second request gets the next number", [.request(), .answered(number: 1), .request()],
            "dispatch(number: 2)", .awaitingResponse),
        Transition(
            "HTTP/1.0 closes after its answer", [.request(keepAlive: false), .answered(number: 1)],
            "write(keepAlive: false, isHead: false)", .closing),
        Transition(
            "an answer saying Connection: close closes", [.request(), .answered(number: 1, closeRequested: true)],
            "write(keepAlive: false, isHead: false)", .closing),
        Transition(
            "a HEAD answer has no body", [.request(isHead: true), .answered(number: 1)],
            "write(keepAlive: true, isHead: true)", .reading),
        Transition(
            "an answer to another request is dropped", [.request(), .answered(number: 2)], "drop", .awaitingResponse),
        Transition(
            "a second answer is dropped", [.request(), .answered(number: 1), .answered(number: 1)], "drop", .reading),
        Transition(
            "an answer after a refusal is dropped", [.request(), .deadline(.response), .answered(number: 1)], "drop",
            .closing),
        Transition(
            "drained output of a kept connection does nothing", [.request(), .answered(number: 1), .drained], "none",
            .reading),

        // Event streams.
        Transition(
            "an event stream starts", [.request(), .streamStarted(number: 1)], "stream(endNow: false)", .streaming),
        Transition(
            "a stream's input is only watched", [.request(), .streamStarted(number: 1), .readable(queuedOutput: 0)],
            "discard", .streaming),
        Transition(
            "HEAD on an event stream gets the head alone", [.request(isHead: true), .streamStarted(number: 1)],
            "headOnly", .closing),
        Transition(
            "... and closes after it", [.request(isHead: true), .streamStarted(number: 1), .drained],
            "halfClose(endingStream: false)", .lingering),
        Transition(
            "a stream for another request is dropped", [.request(), .streamStarted(number: 7)], "drop",
            .awaitingResponse),
        Transition(
            "a stream the producer ends closes after its events",
            [.request(), .streamStarted(number: 1), .streamFinished, .drained], "halfClose(endingStream: true)",
            .lingering),
        Transition(
            "a quiet stream gets a keep-alive comment", [.request(), .streamStarted(number: 1), .deadline(.keepAlive)],
            "sendKeepAlive", .streaming),
        Transition(
            "... unless output is still queued",
            [.request(), .streamStarted(number: 1), .deadline(.keepAlive, outputPending: true)], "none", .streaming),

        // The peer leaving.
        Transition("an idle peer closing closes", [.peerClosed()], "close(peerClosed)", .reading),
        Transition(
            "a peer closing mid-request closes", [.peerClosed(midRequest: true)], "close(peerClosedMidRequest)",
            .reading),
        Transition(
            "a peer that closes still gets what it is owed",
            [.request(), .answered(number: 1), .peerClosed(outputPending: true)], "finishWriting", .closing),
        Transition(
            "a peer that half-closes after its request gets the answer", [.request(), .peerClosed()], "finishWriting",
            .awaitingResponse),
        Transition(
            "... then the connection closes", [.request(), .peerClosed(), .answered(number: 1)],
            "write(keepAlive: false, isHead: false)", .closing),
        Transition(
            "a subscriber leaving closes", [.request(), .streamStarted(number: 1), .peerClosed()],
            "close(peerClosedStream)", .streaming),
        Transition(
            "a lingering connection closes when the peer does", [.rejected, .drained, .peerClosed()],
            "close(lastResponseRead)", .lingering),

        // Deadlines.
        Transition(
            "a slow head is refused with 408", [.deadline(.requestHead, midRequest: true)],
            "refuse(headTimeout, isHead: false)", .closing),
        Transition(
            "a connection that never sent a byte closes quietly", [.deadline(.requestHead)], "close(headTimeout)",
            .reading),
        Transition(
            "a slow head owed output closes quietly", [.deadline(.requestHead, midRequest: true, outputPending: true)],
            "close(headTimeout)", .reading),
        Transition(
            "a stalled body is refused with 408", [.deadline(.body, midRequest: true)],
            "refuse(bodyTimeout, isHead: false)", .closing),
        Transition(
            "a responder too slow gets a 503", [.request(), .deadline(.response)],
            "refuse(responseTimeout, isHead: false)", .closing),
        Transition(
            "... without a body for HEAD", [.request(isHead: true), .deadline(.response)],
            "refuse(responseTimeout, isHead: true)", .closing),
        Transition(
            "an idle connection closes", [.request(), .answered(number: 1), .deadline(.idle)], "close(idle)", .reading),
        Transition(
            "a peer not reading is cut off", [.request(), .answered(number: 1), .deadline(.write)],
            "close(peerNotReading)", .reading),
        Transition("lingering ends", [.rejected, .drained, .deadline(.linger)], "close(lastResponseRead)", .lingering),

        // Graceful shutdown.
        Transition("shutdown closes an idle connection", [.shutdown()], "close(shutdown)", .reading),
        Transition("shutdown lets a request being received arrive", [.shutdown(midRequest: true)], "none", .reading),
        Transition(
            "... and answers it with Connection: close",
            [.shutdown(midRequest: true), .request(), .answered(number: 1)], "write(keepAlive: false, isHead: false)",
            .closing),
        Transition("shutdown lets an answer being awaited come", [.request(), .shutdown()], "none", .awaitingResponse),
        Transition(
            "... and closes after it", [.request(), .shutdown(), .answered(number: 1)],
            "write(keepAlive: false, isHead: false)", .closing),
        Transition(
            "shutdown finishes writing what is owed",
            [.request(), .answered(number: 1), .shutdown(outputPending: true)], "finishWriting", .closing),
        Transition(
            "shutdown ends a stream", [.request(), .streamStarted(number: 1), .shutdown()], "endStream", .streaming),
        Transition(
            "... which then closes", [.request(), .streamStarted(number: 1), .shutdown(), .drained],
            "halfClose(endingStream: true)", .lingering),
        Transition(
            "a stream starting during shutdown ends at once", [.request(), .shutdown(), .streamStarted(number: 1)],
            "stream(endNow: true)", .streaming),

        // The shutdown deadline: whoever is still waiting gets a 503.
        Transition(
            "an unanswered request gets a 503 at the deadline", [.request(), .shutdown(), .shutdownDeadline()],
            "refuseAndClose(shuttingDown, isHead: false)", .closing),
        Transition(
            "... without a body for HEAD", [.request(isHead: true), .shutdown(), .shutdownDeadline()],
            "refuseAndClose(shuttingDown, isHead: true)", .closing),
        Transition(
            "a request still arriving gets a 503 too",
            [.shutdown(midRequest: true), .shutdownDeadline(midRequest: true)],
            "refuseAndClose(shuttingDown, isHead: false)", .closing),
        Transition(
            "a connection owed nothing closes",
            [.request(), .answered(number: 1), .shutdownDeadline(outputPending: true)], "close(shutdownDeadline)",
            .closing),
        Transition(
            "a stream closes", [.request(), .streamStarted(number: 1), .shutdown(), .shutdownDeadline()],
            "close(shutdownDeadline)", .closing),

        // Connection limits.
        Transition(
            "a connection over a limit is refused as it opens", [.refuseAtOpen],
            "refuse(tooManyConnections, isHead: false)", .closing),
        Transition(
            "... and its input is only watched", [.refuseAtOpen, .readable(queuedOutput: 0)], "discard", .closing),
    ]

    @Test(arguments: transitions)
    func transition(_ row: Transition) {
        var machine = Machine(openedAt: .zero)
        var action = ""
        for event in row.events { action = event.apply(to: &machine) }
        #expect(action == row.action)
        #expect(machine.state == row.state)
    }

    static let timeouts: EventLoop.Timeouts = {
        var configuration = HTTPServer.Configuration()
        configuration.requestHeadTimeout = .seconds(10)
        configuration.bodyTimeout = .seconds(30)
        configuration.idleTimeout = .seconds(60)
        configuration.writeTimeout = .seconds(20)
        configuration.responseTimeout = .seconds(50)
        configuration.eventStreamKeepAliveInterval = .seconds(15)
        return EventLoop.Timeouts(configuration)
    }()

    /// The deadline after `setup` (times in seconds since the connection opened at 100 s).
    static func deadline(
        _ setup: (inout Machine) -> Void, readingBody: Bool = false, midRequest: Bool = false,
        outputPending: Bool = false
    ) -> String {
        var machine = Machine(openedAt: .seconds(100))
        setup(&machine)
        guard
            let deadline = machine.deadline(
                timeouts, readingBody: readingBody, midRequest: midRequest, outputPending: outputPending)
        else { return "none" }
        return "\(deadline.kind) at \(deadline.at.components.seconds)"
    }

    @Test func eachStateHasItsDeadline() {
        #expect(Self.deadline { _ in } == "requestHead at 110")
        #expect(
            Self.deadline({ $0.received(at: .seconds(105), startsRequest: true, readingBody: false) }, midRequest: true)
                == "requestHead at 115")
        #expect(
            Self.deadline(
                { $0.received(at: .seconds(108), startsRequest: false, readingBody: true) }, readingBody: true,
                midRequest: true) == "body at 138")
        let answered: (inout Machine) -> Void = { machine in
            _ = machine.parsed(.request(keepAlive: true, isHead: false), at: .seconds(101))
            _ = machine.answered(number: 1, closeRequested: false, at: .seconds(102))
        }
        #expect(Self.deadline(answered) == "idle at 162")
        #expect(
            Self.deadline(
                {
                    answered(&$0)
                    $0.wrote(at: .seconds(102))
                }, outputPending: true) == "write at 122")
        let awaiting: (inout Machine) -> Void = {
            _ = $0.parsed(.request(keepAlive: true, isHead: false), at: .seconds(101))
        }
        #expect(Self.deadline(awaiting) == "response at 151")
        #expect(
            Self.deadline(
                {
                    awaiting(&$0)
                    $0.wrote(at: .seconds(101))
                }, outputPending: true) == "write at 121")
        let streaming: (inout Machine) -> Void = {
            awaiting(&$0)
            _ = $0.streamStarted(number: 1)
            $0.wrote(at: .seconds(103))
        }
        #expect(Self.deadline(streaming) == "keepAlive at 118")
        #expect(Self.deadline(streaming, outputPending: true) == "write at 123")
        #expect(
            Self.deadline(
                {
                    _ = $0.parsed(.rejected, at: .seconds(101))
                    $0.wrote(at: .seconds(101))
                }, outputPending: true) == "write at 121")
        #expect(
            Self.deadline({
                _ = $0.parsed(.rejected, at: .seconds(101))
                _ = $0.outputDrained(at: .seconds(104))
            }) == "linger at 106")
        #expect(Self.deadline({ $0.closed() }) == "none")
    }
}
