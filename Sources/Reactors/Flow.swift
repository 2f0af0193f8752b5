/// The stream of actions or mutations a reactor's `transform` hooks shape: map or filter the reactor's own
/// elements, and merge other sources (a `SharedValue`'s values for global state).
///
/// ```swift
/// func transform(mutation: Flow<Mutation>) -> Flow<Mutation> {
///     mutation.merge(with: session.currentUser.values.map { Mutation.setUser($0) })
/// }
/// ```
/// The runtime builds the flow once, when it starts; merged sources run until the runtime stops, and a
/// source that throws is reported and ends only that source.
public struct Flow<Element: Sendable>: Sendable {
    /// Feeds every element of one merged source to `yield`.
    @usableFromInline typealias Source = @Sendable (_ yield: @escaping @Sendable (Element) async -> Void) async throws -> Void

    /// Applied to each of the reactor's own elements; `nil` drops the element.
    @usableFromInline var transform: (@Sendable (Element) -> Element?)?
    /// Merged sources, each already carrying the transforms applied after it was merged.
    @usableFromInline var sources: [Source]

    /// The identity flow, as handed to the `transform` hooks.
    @inlinable public init() {
        transform = nil
        sources = []
    }

    /// True when the flow changes nothing, so the runtime can skip it entirely.
    @inlinable var isIdentity: Bool { transform == nil && sources.isEmpty }

    /// Drops the elements (own and merged so far) for which `isIncluded` is false, and transforms the rest.
    @inlinable public func compactMap(_ body: @escaping @Sendable (Element) -> Element?) -> Flow {
        var flow = self
        if let previous = transform {
            flow.transform = { previous($0).flatMap(body) }
        } else {
            flow.transform = body
        }
        flow.sources = sources.map { source in
            { yield in try await source { element in if let mapped = body(element) { await yield(mapped) } } }
        }
        return flow
    }

    /// Transforms every element (own and merged so far).
    @inlinable public func map(_ body: @escaping @Sendable (Element) -> Element) -> Flow {
        compactMap { body($0) }
    }

    /// Keeps only the elements (own and merged so far) for which `isIncluded` is true.
    @inlinable public func filter(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> Flow {
        compactMap { isIncluded($0) ? $0 : nil }
    }

    /// Adds the elements of `source` to the flow, as ReactorKit's `Observable.merge(mutation, global)`.
    public func merge<S: AsyncSequence & Sendable>(with source: S) -> Flow where S.Element == Element {
        var flow = self
        flow.sources.append { yield in
            for try await element in source {
                await yield(element)
            }
        }
        return flow
    }
}
