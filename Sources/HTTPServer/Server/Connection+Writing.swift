#if canImport(Glibc)
import Posix
import Glibc
#endif

/// Writing: output is queued during an iteration and written at its end (or on EPOLLOUT).
extension Connection {
    /// Flushes if output was queued since the last flush.
    func flushIfDirty() {
        if isDirty { flush() }
    }

    /// Writes one stream event straight from the shared encoding when nothing is waiting ahead of
    /// it (the fan-out case): one `send`, no queueing, no second pass in the loop's flush.
    func writeStream(_ chunk: [UInt8], for stream: ServerSentEventStream) {
        guard output.isEmpty, !machine.closeAfterFlush else { return queueStream(chunk) }
        loop.willWrite()
        let sent = chunk.withUnsafeBytes { bytes in Result { () throws(IOError) in try Posix.send(fd, bytes) } }
        let written: Int
        switch sent {
        case .failure(let error):
            return close(reason: Self.describe(error))
        case .success(.wouldBlock):
            written = 0
        case .success(.processed(let count)):
            written = count
        }
        machine.wrote(at: loop.now)
        if written > 0 { stream.didWrite(written) }
        if written < chunk.count {
            // The socket is full: the rest waits for EPOLLOUT under the write timeout.
            output.append(chunk, skipping: written)
            refreshDeadline()
        } else {
            // Nothing left: the keep-alive deadline moved later, so the armed timer is early, not
            // late; it works the deadline out again when it fires. Re-arming costs more than the write.
            stream.outputDrained()
        }
    }

    /// Writes queued output until done or the socket is full (then EPOLLOUT resumes it).
    func flush() {
        isDirty = false
        if isClosed { return }
        if !output.isEmpty { loop.willWrite() }
        let streaming = machine.state == .streaming ? stream : nil
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
            machine.wrote(at: loop.now)
            streaming?.didWrite(written)
        }
        if let streaming {
            output.removeAll(release: true)
            streaming.outputDrained()
            if isClosed || !output.isEmpty { return }
        }
        switch machine.outputDrained(at: loop.now) {
        case .none:
            // Input held back while the peer was not reading what it is owed can be parsed now.
            if unreadInput || !inbound.isEmpty, !isProcessing, machine.readAction(queuedOutput: 0) == .parse { resume() }
        case .halfClose(let endingStream):
            output.removeAll(release: true)
            if endingStream {
                stream?.connectionClosing(reason: "closed")
                stream = nil
            }
            // Half-close, then read until the peer closes: closing with unread input would
            // reset the connection and could destroy the response before the peer reads it.
            _ = Glibc.shutdown(fd, Int32(SHUT_WR))
            discardInput()
        }
        refreshDeadline()
    }
}
