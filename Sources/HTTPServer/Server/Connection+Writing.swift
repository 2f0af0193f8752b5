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
    /// it and what it shows (`position`, nil: everything appended so far) is durable (the fan-out
    /// case): one `send`, no queueing, no second pass in the loop's flush.
    func writeStream(_ chunk: [UInt8], dependingOn position: UInt64?, for stream: ServerSentEventStream) {
        guard output.isEmpty, !machine.closeAfterFlush, mayWriteAtOnce(dependingOn: position) else {
            return queueStream(chunk, dependingOn: position)
        }
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
            // The socket is full: the rest waits for EPOLLOUT under the write timeout (it is durable).
            output.append(chunk, skipping: written)
            hold(chunk.count - written, dependingOn: 0)
            refreshDeadline()
        } else {
            // Nothing left: the keep-alive deadline moved later, so the armed timer is early, not
            // late; it works the deadline out again when it fires. Re-arming costs more than the write.
            stream.outputDrained()
        }
    }

    /// Writes queued output until done, the socket is full (then EPOLLOUT resumes it) or what is
    /// left waits to be durable (then the barrier's wake-up does).
    func flush() {
        isDirty = false
        if isClosed { return }
        let streaming = machine.state == .streaming ? stream : nil
        var writable = output.isEmpty ? 0 : writableByteCount()
        // A refused held answer, or held output showing records that can never be stored, may have
        // closed the connection.
        if isClosed { return }
        while writable > 0 {
            let result: IOResult<Int>
            do {
                result = try output.write(to: fd, atMost: writable)
            } catch {
                close(reason: Self.describe(error))
                return
            }
            guard case .processed(let written) = result else {
                refreshDeadline()
                return
            }
            writable -= written
            machine.wrote(at: loop.now)
            streaming?.didWrite(written)
        }
        if holds.held > 0 {
            awaitDurability()
            refreshDeadline()
            return
        }
        if let streaming {
            output.removeAll(release: true)
            streaming.outputDrained()
            if isClosed || !output.isEmpty { return }
        }
        switch machine.outputDrained(at: loop.now) {
        case .none:
            // Input held back while the peer was not reading what it is owed can be parsed now.
            if unreadInput || !inbound.isEmpty, !isProcessing, machine.readAction(queuedOutput: 0) == .parse {
                resume()
            }
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
