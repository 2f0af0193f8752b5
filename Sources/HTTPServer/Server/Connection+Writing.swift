#if canImport(Glibc)
import Glibc
#endif

/// Writing: output is queued during an iteration and written at its end (or on EPOLLOUT).
extension Connection {
    /// Flushes if output was queued since the last flush.
    func flushIfDirty() {
        if isDirty { flush() }
    }

    /// Writes queued output until done or the socket is full (then EPOLLOUT resumes it).
    func flush() {
        isDirty = false
        if isClosed { return }
        if !output.isEmpty { loop.willWrite() }
        while !output.isEmpty {
            let result: IOResult<Int>
            do {
                result = try output.write(to: fd)
            } catch {
                close(reason: Self.describe(error))
                return
            }
            guard case .processed(let written) = result else {
                refreshDeadline()
                return
            }
            writeProgressAt = loop.now
            if case .streaming(let stream) = state { stream.didWrite(written) }
        }
        if case .streaming(let stream) = state {
            output.removeAll(release: true)
            stream.outputDrained()
            if isClosed || !output.isEmpty { return }
        }
        if closeAfterFlush {
            closeAfterFlush = false
            output.removeAll(release: true)
            if case .streaming(let stream) = state { stream.connectionClosing(reason: "closed") }
            // Half-close, then read until the peer closes: closing with unread input would
            // reset the connection and could destroy the response before the peer reads it.
            _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            state = .lingering
            lingerSince = loop.now
            discardInput()
        }
        refreshDeadline()
    }
}
