extension SearchReactor {
    /// Repository names the sample search looks through, so the service can host `search` without a network.
    public static let sampleRepositories: [String] = [
        "apple/swift", "apple/swift-nio", "apple/swift-log", "apple/swift-metrics", "apple/swift-collections",
        "apple/swift-algorithms", "apple/swift-argument-parser", "apple/swift-crypto", "apple/swift-format",
        "apple/swift-syntax", "apple/swift-testing", "apple/swift-atomics", "apple/swift-system",
        "swiftlang/swift-foundation", "swiftlang/swift-package-manager", "swiftlang/sourcekit-lsp",
        "ReactorKit/ReactorKit", "ReactiveX/RxSwift", "pointfreeco/swift-composable-architecture",
        "pointfreeco/swift-dependencies", "hummingbird-project/hummingbird", "vapor/vapor", "vapor/postgres-nio",
        "Alamofire/Alamofire", "onevcat/Kingfisher", "SnapKit/SnapKit", "realm/SwiftLint", "nicklockwood/SwiftFormat",
        "apple/swift-async-algorithms", "apple/swift-distributed-actors", "apple/swift-protobuf", "grpc/grpc-swift",
    ]

    /// How many results one sample page holds.
    public static let samplePageSize = 5

    /// Case-insensitive substring search over `sampleRepositories`, `samplePageSize` items per page.
    public static let sampleFetch: Fetch = { query, page in
        let needle = query.lowercased()
        let matches = sampleRepositories.filter { $0.lowercased().contains(needle) }
        let start = max(0, (page - 1) * samplePageSize)
        guard start < matches.count else { return ([], nil) }
        let end = min(matches.count, start + samplePageSize)
        return (Array(matches[start..<end]), end < matches.count ? page + 1 : nil)
    }
}
