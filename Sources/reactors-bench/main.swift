// Prints throughput and footprint of the Reactors runtime, measured from this separate module so that
// cross-module generic calls are what is measured (the HTTP service calls the runtime the same way).
import Dispatch
import Examples
import Reactors
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A counter defined in this module, to compare with `Examples.CounterReactor` (both cross the module boundary).
struct LocalCounter: Reactor {
    enum Action: Codable, Sendable { case increase }
    struct State: Codable, Sendable { var value = 0 }
    var initialState: State { State() }
    func reduce(state: State, mutation: Action) -> State { State(value: state.value &+ 1) }
}

/// A counter whose every action runs an async effect (one task per action), for comparison.
struct AsyncCounter: Reactor {
    enum Action: Codable, Sendable { case increase }
    struct State: Codable, Sendable { var value = 0 }
    var initialState: State { State() }
    func mutate(action: Action) -> Effect<Action> { .run { emit in await emit(.increase) } }
    func reduce(state: State, mutation: Action) -> State { State(value: state.value &+ 1) }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func report(_ label: String, actions: Int, _ elapsed: Duration) {
    let rate = Double(actions) / seconds(elapsed)
    print("\(label): \(actions) actions in \(String(format2(seconds(elapsed)))) s = \(Int(rate)) actions/s")
}

func format2(_ value: Double) -> String {
    let hundredths = max(0, Int((value * 100).rounded()))
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
}

/// Sends `total` actions from `senders` threads and returns the time until the last one was reduced.
func measureSends<R: Reactor>(_ runtime: ReactorRuntime<R>, _ action: R.Action, total: Int, senders: Int) -> Duration {
    let perSender = total / senders
    // Each sender's last action completes only after everything queued before it (FIFO), so once all
    // last actions completed, every action has been reduced, even by a drain handed off to a task.
    let done = DispatchSemaphore(value: 0)
    let clock = ContinuousClock()
    let start = clock.now
    DispatchQueue.concurrentPerform(iterations: senders) { _ in
        for _ in 1..<perSender { _ = try? runtime.send(action) }
        _ = try? runtime.send(action) { _ in done.signal() }
    }
    for _ in 0..<senders { done.wait() }
    return clock.now - start
}

/// The same loop with generic specialization forbidden: what every `send` would cost if the runtime's hot
/// path were not `@inlinable` (the caller could then only use the unspecialized generic entry points).
@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func measureUnspecialized<R: Reactor>(_ runtime: ReactorRuntime<R>, _ action: R.Action, total: Int) -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<total { _ = try? runtime.send(action) }
    return clock.now - start
}

/// Resident memory in bytes, from /proc/self/statm (Glibc does not expose <malloc.h> to Swift).
func residentBytes() -> Int {
    guard let file = fopen("/proc/self/statm", "r") else { return 0 }
    defer { fclose(file) }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = fread(&buffer, 1, buffer.count, file)
    let fields = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// `malloc_usable_size` looked up at run time, for the same reason.
let mallocUsableSize: (@convention(c) (UnsafeMutableRawPointer?) -> Int)? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
}()

let arguments = CommandLine.arguments.dropFirst()
let total = arguments.first.flatMap(Int.init) ?? 5_000_000
let instances = arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000

print("reactors-bench: \(total) actions per run, \(instances) idle runtimes")

// Footprint first, on a fresh heap: memory freed by the throughput runs would be reused and hide growth.
// Heap bytes per idle counter runtime (no observer, never sent to).
do {
    var runtimes: [ReactorRuntime<CounterReactor>] = []
    runtimes.reserveCapacity(instances)
    let before = residentBytes()
    for _ in 0..<instances { runtimes.append(ReactorRuntime(CounterReactor())) }
    let after = residentBytes()
    // Minus the 8-byte slot each runtime takes in `runtimes` itself.
    let perRuntime = Double(after - before) / Double(instances) - 8
    let usable = mallocUsableSize?(Unmanaged.passUnretained(runtimes[0]).toOpaque()) ?? -1
    print(
        "idle counter runtime: \(format2(perRuntime)) resident bytes "
            + "(array slot excluded) each over \(instances) instances; "
            + "one heap block, malloc_usable_size \(usable) (+8 bytes malloc header)")
    // A session keeps one observer (its publisher) attached: measure runtime + observer + token.
    var used: [(ReactorRuntime<CounterReactor>, ObservationToken)] = []
    let count = instances / 10
    used.reserveCapacity(count)
    let beforeUsed = residentBytes()
    for _ in 0..<count {
        let runtime = ReactorRuntime(CounterReactor())
        _ = try? runtime.send(.increase)
        used.append((runtime, runtime.observe { _ in }))
    }
    let afterUsed = residentBytes()
    print(
        "counter runtime with one observer and its token, after one send: "
            + "\(format2(Double(afterUsed - beforeUsed) / Double(count) - 16)) resident bytes "
            + "(array slot excluded) each over \(count) instances"
    )
    withExtendedLifetime((runtimes, used)) {}
}

// Warm up so the first measurement does not pay for page faults and lazy initialisation.
_ = measureSends(ReactorRuntime(CounterReactor()), .increase, total: 100_000, senders: 1)

do {
    let runtime = ReactorRuntime(CounterReactor())
    report("counter (Examples), 1 sender", actions: total, measureSends(runtime, .increase, total: total, senders: 1))
    precondition(runtime.currentState.value == total, "lost actions: \(runtime.currentState.value) != \(total)")
}
do {
    let runtime = ReactorRuntime(LocalCounter())
    report(
        "counter (bench module), 1 sender", actions: total, measureSends(runtime, .increase, total: total, senders: 1))
}
do {
    let runtime = ReactorRuntime(CounterReactor())
    let elapsed = measureSends(runtime, .increase, total: total, senders: 8)
    report("counter (Examples), 8 senders", actions: total, elapsed)
    precondition(runtime.currentState.value == total, "lost actions: \(runtime.currentState.value) != \(total)")
    precondition(runtime.currentVersion == UInt64(total), "version gap")
}
do {
    let runtime = ReactorRuntime(CounterReactor())
    let count = total / 10
    report(
        "counter, 1 sender, unspecialized generic caller (for comparison)", actions: count,
        measureUnspecialized(runtime, .increase, total: count))
}
do {
    let runtime = ReactorRuntime(CounterReactor())
    let observed = Atomic<UInt64>(0)
    let token = runtime.observe { event in
        if case .state(let snapshot, _) = event { observed.store(snapshot.version, ordering: .relaxed) }
    }
    report(
        "counter with 1 observer, 1 sender", actions: total, measureSends(runtime, .increase, total: total, senders: 1))
    precondition(observed.load(ordering: .relaxed) == UInt64(total))
    token.cancel()
}
do {
    let runtime = ReactorRuntime(AsyncCounter())
    let count = total / 20
    report(
        "async effect (.run, one task per action), 1 sender", actions: count,
        measureSends(runtime, .increase, total: count, senders: 1))
    precondition(runtime.currentState.value == count)
}
do {
    let runtime = ReactorRuntime(TodoReactor())
    let token = runtime.observe { _ in }
    let count = total / 10
    report(
        "todo toggle of an unknown id (pulse) with 1 observer", actions: count,
        measureSends(runtime, .toggle(id: 0), total: count, senders: 1))
    token.cancel()
}
