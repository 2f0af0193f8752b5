/// The icon of the pages (`GET /favicon.ico`): a small SVG, which browsers take at that path when it
/// comes as `image/svg+xml`, so neither page nor API browsing leaves a 404 in the log.
enum Favicon {
    static let contentType = "image/svg+xml"
    /// Icons do not change between builds often; a day of caching spares a request per page view.
    static let headers = [("Cache-Control", "public, max-age=86400"), ("X-Content-Type-Options", "nosniff")]

    static let svg: [UInt8] = Array(
        #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
        <rect width="32" height="32" rx="7" fill="#0a64d8"/>
        <g fill="none" stroke="#fff" stroke-width="1.8">
        <ellipse cx="16" cy="16" rx="11.5" ry="4.6"/>
        <ellipse cx="16" cy="16" rx="11.5" ry="4.6" transform="rotate(60 16 16)"/>
        <ellipse cx="16" cy="16" rx="11.5" ry="4.6" transform="rotate(120 16 16)"/>
        </g>
        <circle cx="16" cy="16" r="3" fill="#fff"/>
        </svg>

        """#.utf8)
}
