import NATS

/// What the NATS backend adds to `/metrics`.
final class NATSStorageMetrics: Sendable {
    /// From a publish to its acknowledgement by a JetStream quorum.
    let publishLatency = Histogram()
    /// Records carried by acknowledged publishes (records per publish: this over the histogram's count).
    let publishedRecords = Counter()
    /// Sessions this instance took over from a dead instance's claim.
    let takeovers = Counter()
    /// Publishes refused because another instance took the session over (expected sequence failed).
    let fencingRejections = Counter()
    /// Publishes retried after a timeout or a lost connection.
    let retries = Counter()
    /// Records appended here that can never be stored (their session was taken over or deleted
    /// meanwhile): output showing them is refused.
    let lostRecords = Counter()
    /// Sessions this instance handed to another instance that asked for them.
    let handOffsServed = Counter()
    /// From asking a live owner for a session to its answer that it let the session go.
    let handOffLatency = Histogram()

    /// Renders these, with `requests`: the JetStream round trips of this instance's connection by kind.
    func render(into text: inout PrometheusText, requests: SentRequests) {
        text.histogram(
            "reactor_storage_publish_seconds",
            help: "Time from publishing a batch of records to its acknowledgement by a JetStream quorum.",
            publishLatency)
        text.family(
            "reactor_storage_published_records_total", type: "counter",
            help: "Records carried by acknowledged publishes (several may share one publish).")
        text.sample("reactor_storage_published_records_total", value: publishedRecords.value)
        text.family(
            "reactor_storage_jetstream_requests_total", type: "counter",
            help: "JetStream round trips this instance started, by kind: publish (records, awaiting the quorum's ack), "
                + "kv_write (claims, heartbeats, session entries), api (reads, purges, consumers).")
        text.sample("reactor_storage_jetstream_requests_total", labels: ["kind": "publish"], value: requests.publishes)
        text.sample(
            "reactor_storage_jetstream_requests_total", labels: ["kind": "kv_write"], value: requests.keyValueWrites)
        text.sample("reactor_storage_jetstream_requests_total", labels: ["kind": "api"], value: requests.apiCalls)
        text.family(
            "reactor_storage_takeovers_total", type: "counter",
            help: "Sessions this instance took over from an instance whose claim had expired.")
        text.sample("reactor_storage_takeovers_total", value: takeovers.value)
        text.family(
            "reactor_storage_fencing_rejections_total", type: "counter",
            help: "Appends refused because another instance had taken the session over.")
        text.sample("reactor_storage_fencing_rejections_total", value: fencingRejections.value)
        text.family(
            "reactor_storage_handoffs_total", type: "counter",
            help: "Sessions this instance handed off to another instance that asked for them.")
        text.sample("reactor_storage_handoffs_total", value: handOffsServed.value)
        text.histogram(
            "reactor_storage_handoff_seconds",
            help: "Time from asking a live instance for a session to its answer that it let the session go.",
            handOffLatency)
        text.family(
            "reactor_storage_publish_retries_total", type: "counter",
            help: "Publishes retried after a timeout or a lost connection.")
        text.sample("reactor_storage_publish_retries_total", value: retries.value)
        text.family(
            "reactor_storage_lost_records_total", type: "counter",
            help:
                "Records appended here that can never be stored because another instance took their session over "
                + "(or it was deleted); answers and events showing them were refused."
        )
        text.sample("reactor_storage_lost_records_total", value: lostRecords.value)
    }
}
