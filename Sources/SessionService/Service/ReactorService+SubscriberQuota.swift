extension ReactorService {
    /// Counts `count` new subscribers against the request's client address (`sse.maxSubscribersPerAddress`):
    /// one hold per subscriber, each given back once its subscriber has left its session (dropped unused,
    /// they give themselves back). None when the cap is off, or the client exempt (`limits.exemptAddresses`)
    /// or unknown (a request another instance forwarded: that instance counted it). Throws 503
    /// `too_many_subscribers` when the address would hold more than its cap; the global limit is separate.
    func holdSubscribers(_ count: Int, for exchange: Exchange) throws(APIError) -> [AddressQuota.Hold] {
        guard let quota = clients.subscriberQuota, count > 0,
            let client = exchange.limitedClient(resolvedBy: clients.resolver, exempt: clients.exempt)
        else { return [] }
        if let holds = quota.take(count, for: client) { return holds }
        metrics.subscribersRefusedPerAddress.increment()
        let adding = count > 1 ? "; this stream would add \(count)" : ""
        throw .tooManySubscribers(
            "client \(client) holds \(quota.held(by: client)) subscribers, its limit is \(quota.limit) "
                + "(sse.maxSubscribersPerAddress)\(adding); close some streams")
    }
}
