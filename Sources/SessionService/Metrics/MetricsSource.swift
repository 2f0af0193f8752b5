/// Something that adds its own families to `/metrics` (a storage backend), attached to
/// ``ServiceMetrics`` once it exists.
protocol MetricsSource: AnyObject, Sendable {
    /// Appends this source's families to `text`.
    func renderMetrics(into text: inout PrometheusText)
}
