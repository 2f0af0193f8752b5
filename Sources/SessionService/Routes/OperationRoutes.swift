import HTTPServer
import JSONCodec

// What operators and tools read: the pages, the icon, health, metrics, the API description, the reactors.
extension ReactorService {
    /// `GET /`: the page to try the service in a browser.
    func servePage(_ exchange: Exchange) { render(WebPage.document, exchange) }

    /// `GET /admin/console`: the admin console page (it asks for the admin token itself).
    func serveConsole(_ exchange: Exchange) { render(AdminConsole.document, exchange) }

    /// Answers with a page rendered for this response (its own script nonce and policy).
    func render(_ document: WebDocument, _ exchange: Exchange) {
        let (body, headers) = document.render()
        exchange.reply(200, body: body, contentType: WebDocument.contentType, headers: headers)
    }

    /// `GET /favicon.ico`: the pages' icon.
    func serveFavicon(_ exchange: Exchange) {
        exchange.reply(200, body: Favicon.svg, contentType: Favicon.contentType, headers: Favicon.headers)
    }

    /// `GET /healthz`: 200 while the server accepts work, 503 while storage fails or it shuts down.
    func answerHealth(_ exchange: Exchange) {
        // Like every route that shows no session's state, it never waits for storage (``RouteNeeds``): a load
        // balancer must hear at once that writes fail.
        if !accepting.load(ordering: .relaxed) {
            exchange.reply(503, json: Array(#"{"status":"shutting_down"}"#.utf8))
        } else if let reason = store.storage?.unavailableReason {
            // API.md: 503 while the server cannot accept work, so a load balancer looks elsewhere.
            exchange.fail(.storageUnavailable(reason))
        } else {
            exchange.reply(200, json: Array(#"{"status":"ok"}"#.utf8))
        }
    }

    /// `GET /metrics`: the Prometheus text.
    func serveMetrics(_ exchange: Exchange) {
        // Other instances' crash records arrive at any time (NATS): counted as of this scrape.
        crashes.refreshGauge()
        exchange.reply(200, body: Array(metrics.render().utf8), contentType: PrometheusText.contentType)
    }

    /// `GET /openapi.json[?reactor=NAME]`: the API description, built once (whole, and for each reactor).
    func serveOpenAPI(_ exchange: Exchange) {
        let named: String?
        do {
            named = try exchange.soleQueryValue("reactor")
        } catch {
            return exchange.fail(error)
        }
        guard let reactor = named else { return exchange.reply(200, json: documents.openAPI) }
        guard let document = documents.openAPIByReactor[reactor] else {
            return exchange.fail(.unknownReactor(reactor, known: catalog.definitions.map(\.name)))
        }
        exchange.reply(200, json: document)
    }

    /// `GET /reactors`: the hosted reactors, built once.
    func listReactors(_ exchange: Exchange) { exchange.reply(200, json: documents.reactors) }
}
