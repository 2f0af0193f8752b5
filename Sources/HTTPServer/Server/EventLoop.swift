import CLinux
import Logs
import Posix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One epoll loop on its own thread: owns a listener, its connections, their timers, and an
/// inbox through which other threads hand it work (woken by an eventfd).
///
/// Everything not marked otherwise is touched only on the loop's thread.
final class EventLoop: @unchecked Sendable {
    /// Work handed to the loop from another thread.
    enum Task {
        case run(@Sendable () -> Void)
        case flush(ServerSentEventStream)
        case flushAll([ServerSentEventStream])
    }

    let index: Int
    let responder: any HTTPResponder
    /// Hands a request to the responder. Called on `self`, the responder is used in place: read
    /// through a connection's `loop`, it was copied and destroyed per request (~200 instructions).
    func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) {
        responder.respond(to: request, writer: writer)
    }
    let clock: any ServerClock
    let configuration: HTTPServer.Configuration
    /// The configured durations, copied out so the hot path does not copy the whole configuration.
    let timeouts: Timeouts
    /// What output waits for before it is written (`Configuration.outputBarrier`).
    let barrier: (any OutputBarrier)?
    /// Whether the barrier may lose positions (``OutputBarrier/losesPositions``), read once.
    let barrierLosesPositions: Bool
    let logger: Logger
    let epoll: Epoll
    let wakeFD: Int32
    var listenerFD: Int32
    let limiter: ConnectionLimiter
    /// A descriptor held in reserve: at the open-file limit it is closed to accept and close the
    /// connections waiting in the backlog (they are told at once instead of hanging), then reopened.
    var reserveFD: Int32 = -1
    /// The loop's thread (a `pthread_t`), 0 until it starts. Atomic: the loop's thread stores it while
    /// other threads may already ask ``inLoop``.
    let thread = Atomic<UInt>(0)

    let inbox = Mutex<[Task]>([])
    let wakePending = Atomic<Bool>(false)

    // The loop's mutable state is touched only on its own thread, one access at a time, so it opts
    // out of dynamic exclusivity checks like `Connection` does: they cost ~1,000 instructions per
    // request here (flush, timers and timeouts read these arrays many times per iteration).
    @exclusivity(unchecked) var connections: [Connection?] = []
    @exclusivity(unchecked) var freeSlots: [Int] = []
    @exclusivity(unchecked) var connectionCount = 0
    @exclusivity(unchecked) var timers = TimerHeap()
    @exclusivity(unchecked) var dirty: [Connection] = []
    @exclusivity(unchecked) var localStreams: [ServerSentEventStream] = []
    @exclusivity(unchecked) var flushingStreams: [ServerSentEventStream] = []
    @exclusivity(unchecked) var flushingConnections: [Connection] = []
    @exclusivity(unchecked) var acceptPausedUntil: Duration? = nil
    /// The current pause between accept attempts while out of descriptors (zero when accepting).
    @exclusivity(unchecked) var acceptBackoff: Duration = .zero
    @exclusivity(unchecked) var shutdownDeadline: Duration? = nil
    @exclusivity(unchecked) var running = true
    @exclusivity(unchecked) var generationCounter: UInt32 = 0

    /// The time at the start of this loop iteration.
    @exclusivity(unchecked) private(set) var now: Duration = .zero
    @exclusivity(unchecked) var date = HTTPDate()
    /// The `Date` header line for this iteration.
    @exclusivity(unchecked) private(set) var dateLine: [UInt8] = []
    /// Shared by every connection of this loop: bytes are parsed in place and only an incomplete
    /// request's leftover is copied into the connection.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// Every timeout a connection arms, as plain values.
    struct Timeouts {
        let requestHeadTimeout, bodyTimeout, idleTimeout, writeTimeout, responseTimeout: Duration
        let eventStreamKeepAliveInterval: Duration

        init(_ configuration: HTTPServer.Configuration) {
            requestHeadTimeout = configuration.requestHeadTimeout
            bodyTimeout = configuration.bodyTimeout
            idleTimeout = configuration.idleTimeout
            writeTimeout = configuration.writeTimeout
            responseTimeout = configuration.responseTimeout
            eventStreamKeepAliveInterval = configuration.eventStreamKeepAliveInterval
        }
    }

    private static let wakeToken = UInt64.max
    private static let listenerToken = UInt64.max - 1

    init(index: Int, listener: Int32, server: HTTPServer, limiter: ConnectionLimiter) throws(IOError) {
        self.index = index
        self.limiter = limiter
        self.responder = server.responder
        self.clock = server.clock
        self.configuration = server.configuration
        self.timeouts = Timeouts(server.configuration)
        barrier = server.configuration.outputBarrier
        barrierLosesPositions = server.configuration.outputBarrier?.losesPositions ?? false
        var logger = server.logger
        logger[field: "loop"] = .int(index)
        self.logger = logger
        self.listenerFD = listener
        epoll = try Epoll()
        wakeFD = try Posix.eventfd()
        do {
            try epoll.add(wakeFD, [.readable, .edgeTriggered], token: Self.wakeToken)
            try epoll.add(listener, [.readable, .edgeTriggered], token: Self.listenerToken)
        } catch {
            // Every property is set, so `deinit` runs when this throws and closes the eventfd; the
            // listener stays the caller's to close. Closing either here too would close a number
            // another thread may have opened meanwhile.
            listenerFD = -1
            throw error
        }
        reserveFD = Self.openReserve()
    }

    deinit {
        readBuffer.deallocate()
        Posix.close(wakeFD)
        if listenerFD >= 0 { Posix.close(listenerFD) }
        if reserveFD >= 0 { Posix.close(reserveFD) }
    }

    /// A spare descriptor (of /dev/null), or -1 when none is free.
    static func openReserve() -> Int32 {
        (try? Posix.open("/dev/null", O_RDONLY | O_CLOEXEC)) ?? -1
    }

    // MARK: threads

    /// Whether the caller runs on this loop's thread.
    var inLoop: Bool { pthread_equal(pthread_self(), pthread_t(thread.load(ordering: .acquiring))) != 0 }

    /// Starts the loop's thread; `onExit` runs on it after the loop ends.
    func startThread(onExit: @escaping @Sendable () -> Void) {
        final class Start: @unchecked Sendable {
            let loop: EventLoop
            let onExit: @Sendable () -> Void
            init(_ loop: EventLoop, _ onExit: @escaping @Sendable () -> Void) {
                self.loop = loop
                self.onExit = onExit
            }
        }
        let start = Unmanaged.passRetained(Start(self, onExit)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var created = pthread_t()
        let result = pthread_create(
            &created, &attributes,
            { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                start.loop.thread.store(UInt(pthread_self()), ordering: .releasing)
                start.loop.run()
                start.onExit()
                return nil
            }, start)
        pthread_attr_destroy(&attributes)
        precondition(result == 0, "pthread_create failed with \(result)")
    }

    /// Runs `work` on the loop: now if called on it, else at its next wake-up.
    func execute(_ work: @escaping @Sendable () -> Void) {
        if inLoop {
            work()
        } else {
            enqueue(.run(work))
        }
    }

    /// Hands a task to the loop from any thread; one eventfd write per batch of wake-ups.
    func enqueue(_ task: Task) {
        inbox.withLock { $0.append(task) }
        wakeUp()
    }

    /// Makes the loop run an iteration soon (its timers and inbox are checked).
    func wakeUp() {
        if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
            Posix.signal(eventfd: wakeFD)
        }
    }

    /// Asks for `stream`'s queued events to be written; called by the stream when it goes from
    /// idle to having output.
    func scheduleFlush(_ stream: ServerSentEventStream) {
        if inLoop {
            localStreams.append(stream)
        } else {
            enqueue(.flush(stream))
        }
    }

    /// Like `scheduleFlush`, for a batch: one inbox lock and one wake-up for all of them.
    func scheduleFlush(_ streams: [ServerSentEventStream]) {
        if inLoop {
            if localStreams.isEmpty {
                localStreams = streams
            } else {
                localStreams.append(contentsOf: streams)
            }
        } else {
            enqueue(.flushAll(streams))
        }
    }

    // MARK: the loop

    func run() {
        var spare: [Task] = []
        while running {
            let timeout = waitTimeout()
            let count: Int
            do {
                count = try epoll.wait(timeoutMilliseconds: timeout)
            } catch {
                logger.critical("epoll_wait failed; stopping this loop", ["error": .string(error.description)])
                break
            }
            now = clock.now()
            dateLine = date.current()
            for position in 0..<count {
                let (events, token) = epoll.event(at: position)
                switch token {
                case Self.wakeToken:
                    Posix.drain(eventfd: wakeFD)
                case Self.listenerToken:
                    acceptConnections()
                default:
                    let slot = Int(truncatingIfNeeded: token & 0xFFFF_FFFF)
                    let generation = UInt32(truncatingIfNeeded: token >> 32)
                    guard slot < connections.count, let connection = connections[slot],
                        connection.generation == generation
                    else {
                        continue
                    }
                    connection.handle(events)
                }
            }
            wakePending.store(false, ordering: .releasing)
            inbox.withLock { swap(&spare, &$0) }
            for task in spare {
                switch task {
                case .run(let work): work()
                // Written in `flush()`, after this round's answers, like the streams this loop fed.
                case .flush(let stream): localStreams.append(stream)
                case .flushAll(let streams): localStreams.append(contentsOf: streams)
                }
            }
            spare.removeAll(keepingCapacity: spare.capacity <= 1024)
            runTimers()
            flush()
            if let deadline = shutdownDeadline {
                if now >= deadline {
                    shutdownDeadlinePassed()
                } else if onlyLingeringConnectionsLeft {
                    forceCloseAll()
                }
                if connectionCount == 0 { break }
            }
        }
        running = false
        forceCloseAll()
        timers.removeAll()
        closeListener()
        logger.debug("loop stopped")
    }

    func waitTimeout() -> Int32 {
        // Output left for the next round (the flush rounds are bounded) is written without waiting.
        if !dirty.isEmpty || !localStreams.isEmpty { return 0 }
        var earliest = timers.earliest
        if let paused = acceptPausedUntil { earliest = min(earliest ?? paused, paused) }
        if let deadline = shutdownDeadline { earliest = min(earliest ?? deadline, deadline) }
        // A manual clock moves only when a test advances it (which wakes the loop); an accept
        // pause is real time either way.
        if !clock.advancesByItself { return acceptPausedUntil == nil ? -1 : 100 }
        guard let earliest else { return -1 }
        // In attoseconds, divided as a 64-bit number: `Duration.components` (128-bit arithmetic in the standard
        // library) cost ~190 instructions per loop turn.
        let remaining = (earliest - clock.now()).attoseconds
        if remaining <= 0 { return 0 }
        // Beyond what 64 bits hold (~9.2 s) the loop wakes after 9 s and works the wait out again.
        guard remaining < Self.longestExactWait else { return 9_000 }
        // Round up so a timer is never woken for a millisecond early and spun on.
        return Int32(Int64(truncatingIfNeeded: remaining) / 1_000_000_000_000_000 + 1)
    }

    /// The longest wait `waitTimeout` works out exactly, in attoseconds (9 s).
    static let longestExactWait: Int128 = 9_000_000_000_000_000_000

    func runTimers() {
        if let paused = acceptPausedUntil, now >= paused || !clock.advancesByItself {
            acceptPausedUntil = nil
            acceptConnections()
        }
        while let entry = timers.popDue(at: now) {
            guard entry.slot < connections.count, let connection = connections[entry.slot],
                connection.generation == entry.generation
            else {
                continue
            }
            connection.timerFired(entry)
        }
    }

    /// Writes every connection with pending output: answers first, then event streams. Stream output
    /// is written as soon as it is moved, so the first subscriber is not kept waiting for the last
    /// one's bookkeeping.
    ///
    /// Answers go first because a fan-out can be long (a thousand writes) and an answer is one: the
    /// client that sent the action hears back at once and its next request arrives while the fan-out
    /// is written, so the next round carries several states to each subscriber in one write, as a
    /// busy session's states come faster than one write each can carry them.
    func flush() {
        var rounds = 0
        while !localStreams.isEmpty || !dirty.isEmpty {
            rounds += 1
            swap(&dirty, &flushingConnections)
            for connection in flushingConnections { connection.flushIfDirty() }
            flushingConnections.removeAll(keepingCapacity: true)
            swap(&localStreams, &flushingStreams)
            for stream in flushingStreams {
                stream.moveOutput()
                stream.connection.flushIfDirty()
            }
            flushingStreams.removeAll(keepingCapacity: true)
            // Notices run during writes may queue more; later rounds pick that up, bounded so
            // a producer that refills on every drain cannot starve the loop.
            if rounds >= 4 { break }
        }
    }

}
