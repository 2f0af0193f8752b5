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
    let layers: [ChainLayer]
    /// The layers that observe answers, in order.
    let observers: [ChainLayer]
    let responder: @Sendable (Exchange) -> Void

    init(_ layers: [any ServiceMiddleware], responder: @escaping @Sendable (Exchange) -> Void) {
        self.layers = layers.filter(\.handlesRequests).map { ChainLayer.box($0) }
        observers = layers.filter(\.observesAnswers).map { ChainLayer.box($0) }
        self.responder = responder
    }

    /// Runs `exchange` through the chain from the start.
    func run(_ exchange: Exchange) {
        exchange.chain = self
        run(exchange, from: 0)
    }

    func run(_ exchange: Exchange, from position: Int) {
        guard position < layers.count else { return responder(exchange) }
        layers[position].handle(exchange, next: MiddlewareNext(chain: self, position: position + 1))
    }

    /// Tells the observing layers that `exchange` was answered with `status`.
    func answered(_ exchange: Exchange, status: Int) {
        for observer in observers { observer.answered(exchange, status: status) }
    }
}

/// A layer as a chain holds it: a class reference, subclassed once per middleware type. Read out of an
/// `[any ServiceMiddleware]`, even in place through a buffer pointer, each call copied the existential and
/// destroyed it after (~85 instructions per layer per request, callgrind: the compiler cannot borrow an
/// array element across a call); through a class reference a call is one virtual call.
class ChainLayer: @unchecked Sendable {
    /// ``ServiceMiddleware/handle(_:next:)`` of the boxed middleware.
    func handle(_ exchange: Exchange, next: MiddlewareNext) {}
    /// ``ServiceMiddleware/answered(_:status:)`` of the boxed middleware.
    func answered(_ exchange: Exchange, status: Int) {}

    /// `middleware` in a box of its own type (an existential argument is opened here).
    static func box(_ middleware: some ServiceMiddleware) -> ChainLayer { TypedChainLayer(middleware) }
}

/// One middleware of type `M` in its box.
final class TypedChainLayer<M: ServiceMiddleware>: ChainLayer, @unchecked Sendable {
    let base: M

    init(_ base: M) { self.base = base }

    override func handle(_ exchange: Exchange, next: MiddlewareNext) { base.handle(exchange, next: next) }

    override func answered(_ exchange: Exchange, status: Int) { base.answered(exchange, status: status) }
}
