/// What the per-client limits know of clients: who a request comes from (`limits.trustedProxies`), who no
/// per-client limit applies to (`limits.exemptAddresses`), and the subscribers each address holds
/// (`sse.maxSubscribersPerAddress`).
struct ClientLimits: Sendable {
    /// Who a request comes from.
    let resolver: ClientAddressResolver
    /// Clients no per-client limit applies to.
    let exempt: [IPNetwork]
    /// Subscribers held by each client address; nil when unlimited.
    let subscriberQuota: AddressQuota?

    /// The limits of `trustedProxies` and `exemptAddresses` (addresses and CIDR networks; unreadable ones are left
    /// out, as the configuration's check refused them before) and `subscribersPerAddress` (0: unlimited).
    init(trustedProxies: [String], exemptAddresses: [String], subscribersPerAddress: Int) {
        resolver = ClientAddressResolver(trustedProxies: trustedProxies.compactMap(IPNetwork.init))
        exempt = exemptAddresses.compactMap(IPNetwork.init)
        subscriberQuota = subscribersPerAddress > 0 ? AddressQuota(limit: subscribersPerAddress) : nil
    }
}
