/// One layer around the routes (Hummingbird's middleware model, with callbacks instead of `async`):
/// it answers the exchange itself and stops, or passes it on with `next`, now or later from any
/// thread. Middleware that needs to see every answer (metrics, the access log) sets
/// `observesAnswers` and is told each answer's status in `answered(_:status:)`; one that only
/// observes sets `handlesRequests` to false and is skipped on the way in.
///
/// ```swift
/// struct RequireHeader: ServiceMiddleware {
///     func handle(_ exchange: Exchange, next: MiddlewareNext) {
///         guard exchange.request.headers["X-Caller"] != nil else { return exchange.fail(.unauthorized) }
///         next(exchange)
///     }
/// }
/// ```
protocol ServiceMiddleware: Sendable {
    /// Answers `exchange` or passes it on with `next(exchange)`, exactly one of the two.
    func handle(_ exchange: Exchange, next: MiddlewareNext)
    /// Whether `handle(_:next:)` does anything (false: the chain skips it on the way in).
    var handlesRequests: Bool { get }
    /// Whether `answered(_:status:)` needs to be called (most middleware only acts before the route).
    var observesAnswers: Bool { get }
    /// Called once per exchange when its answer has been handed to the connection (or its event
    /// stream opened), whichever middleware or route answered it.
    func answered(_ exchange: Exchange, status: Int)
}

extension ServiceMiddleware {
    /// Passes every exchange on.
    func handle(_ exchange: Exchange, next: MiddlewareNext) { next(exchange) }
    var handlesRequests: Bool { true }
    var observesAnswers: Bool { false }
    func answered(_ exchange: Exchange, status: Int) {}
}

/// The rest of a chain after one middleware: calling it runs the next middleware, or the route.
struct MiddlewareNext {
    let chain: MiddlewareChain
    let position: Int

    /// Runs the rest of the chain on `exchange`.
    @inline(__always)
    func callAsFunction(_ exchange: Exchange) { chain.run(exchange, from: position) }
}

/// Middleware in order, then the responder of one route (each route has its chain, built once at
/// start, so a request runs only the middleware its route needs).
final class MiddlewareChain: Sendable {
    let layers: [any ServiceMiddleware]
    /// The layers that observe answers, in order.
    let observers: [any ServiceMiddleware]
    let responder: @Sendable (Exchange) -> Void

    init(_ layers: [any ServiceMiddleware], responder: @escaping @Sendable (Exchange) -> Void) {
        self.layers = layers.filter(\.handlesRequests)
        observers = layers.filter(\.observesAnswers)
        self.responder = responder
    }

    /// Runs `exchange` through the chain from the start.
    func run(_ exchange: Exchange) {
        exchange.chain = self
        run(exchange, from: 0)
    }

    func run(_ exchange: Exchange, from position: Int) {
        guard position < layers.count else { return responder(exchange) }
        // Called in place: read out of the array, each layer was copied and destroyed as an
        // existential on every request (~100 instructions a layer).
        layers.withUnsafeBufferPointer { layers in
            layers[position].handle(exchange, next: MiddlewareNext(chain: self, position: position + 1))
        }
    }

    /// Tells the observing layers that `exchange` was answered with `status`.
    func answered(_ exchange: Exchange, status: Int) {
        observers.withUnsafeBufferPointer { observers in
            for index in observers.indices { observers[index].answered(exchange, status: status) }
        }
    }
}
