import Logs
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// Ending: graceful shutdown, its deadline, and closing.
extension Connection {
    /// Server shutdown: idle connections close now; busy ones after their current answer.
    func shutdown() {
        switch machine.shutdownBegan(
            midRequest: parser.isMidRequest || !inbound.isEmpty, outputPending: !output.isEmpty)
        {
        case .none:
            break
        case .finishWriting:
            markDirty()
        case .endStream:
            stream?.connectionClosing(reason: "server shutting down")
            markDirty()
        case .close(let reason):
            close(reason: reason.message(loop.timeouts))
        }
    }

    /// The shutdown deadline passed: a request still unanswered gets the responder's 503, written
    /// as the connection's last bytes; then it closes, whatever is left unwritten.
    func shutdownDeadlinePassed() {
        switch machine.shutdownDeadlinePassed(
            midRequest: parser.isMidRequest || !inbound.isEmpty, outputPending: !output.isEmpty)
        {
        case .refuseAndClose where holds.held > 0:
            // An earlier answer is still held for durability: a refusal written now would be taken
            // for that answer, so the connection closes with neither.
            close(reason: StateMachine.CloseReason.outputNotDurable.message(loop.timeouts))
        case .refuseAndClose(let refusal, let isHead):
            queue(refusal, isHead: isHead)
            // One attempt: the answer is small and the socket's buffer empty (nothing else was owed).
            _ = try? output.write(to: fd)
            _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            // Unread input would make the close a reset, which can destroy the answer in flight.
            discardInput(atMost: 4)
            close(reason: StateMachine.CloseReason.shutdownDeadline.message(loop.timeouts))
        case .close(let reason):
            close(reason: reason.message(loop.timeouts))
        }
    }

    func close(reason: String) {
        if isClosed { return }
        machine.closed()
        Posix.close(fd)
        loop.remove(self)
        output.removeAll(release: true)
        holds.removeAll()
        if !isProcessing { inbound = [] }
        if let stream {
            self.stream = nil
            stream.connectionClosed(reason: reason)
        }
        if loop.logger.isEnabled(.trace) {
            loop.logger.trace(
                "connection closed", ["reason": .string(reason), "peer": .string(peer?.description ?? "?")])
        }
    }

    static func describe(_ error: IOError) -> String {
        switch error.errno {
        case ECONNRESET: "connection reset by peer"
        case EPIPE: "peer closed the connection"
        default: error.description
        }
    }
}
