import HTTPServer

// Client addresses are the HTTP server's `IPAddress` (it counts connections per address with it); a
// block of them, for trusted proxies and exemptions, is its `IPAddressRange`.

/// A block of addresses (`10.0.0.0/8`, `fd00::/8`, or one address), for trusted proxies and exemptions.
typealias IPNetwork = IPAddressRange
