import Testing

@testable import SessionService

@Suite struct PrometheusTextTests {
    @Test func rendersFamiliesSamplesAndEscapedLabels() {
        var text = PrometheusText()
        text.family("http_requests_total", type: "counter", help: "Requests answered.\nBy route.")
        text.sample("http_requests_total", labels: ["route": "GET /a\"b\\", "status": "200"], value: 3)
        #expect(
            text.output == """
                # HELP http_requests_total Requests answered.\\nBy route.
                # TYPE http_requests_total counter
                http_requests_total{route="GET /a\\"b\\\\",status="200"} 3

                """)
    }

    @Test func histogramBucketsAreCumulative() {
        let histogram = Histogram(bounds: [0.001, 0.01])
        histogram.observe(nanoseconds: 500_000)  // 0.5 ms
        histogram.observe(nanoseconds: 1_000_000)  // exactly 1 ms: le="0.001"
        histogram.observe(nanoseconds: 5_000_000)
        histogram.observe(nanoseconds: 50_000_000)
        var text = PrometheusText()
        text.histogram("d_seconds", help: "h", histogram)
        #expect(text.output.contains("d_seconds_bucket{le=\"0.001\"} 2\n"))
        #expect(text.output.contains("d_seconds_bucket{le=\"0.01\"} 3\n"))
        #expect(text.output.contains("d_seconds_bucket{le=\"+Inf\"} 4\n"))
        #expect(text.output.contains("d_seconds_sum 0.0565\n"))
        #expect(text.output.contains("d_seconds_count 4\n"))
    }
}
