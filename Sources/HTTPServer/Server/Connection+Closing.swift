import Posix
import Logs
#if canImport(Glibc)
import Glibc
#endif

/// Ending: graceful shutdown and closing.
extension Connection {
    /// Server shutdown: idle connections close now; busy ones after their current response.
    func shutdown() {
        switch state {
        case .reading:
            if !parser.isMidRequest && inbound.isEmpty {
                if output.isEmpty {
                    close(reason: "server shutting down")
                } else {
                    closeAfterFlush = true
                    state = .closing
                }
            }
        case .awaitingResponse:
            keepAliveAfterResponse = false
        case .streaming(let stream):
            stream.connectionClosing(reason: "server shutting down")
            closeAfterFlush = true
            if output.isEmpty { flush() }
        case .closing, .lingering, .closed:
            break
        }
    }

    func close(reason: String) {
        let previous = state
        if case .closed = previous { return }
        state = .closed
        Posix.close(fd)
        loop.remove(self)
        output.removeAll(release: true)
        if !isProcessing { inbound = [] }
        if case .streaming(let stream) = previous { stream.connectionClosed(reason: reason) }
        if loop.logger.isEnabled(.trace) {
            loop.logger.trace("connection closed", ["reason": .string(reason), "peer": .string(peer?.description ?? "?")])
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
