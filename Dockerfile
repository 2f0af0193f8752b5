# reactor-server container: build with the Swift 6.3 toolchain, run on a slim Debian with only what
# the static-stdlib binary still links dynamically (glibc, libstdc++, zlib, curl and xml2 for Foundation's
# networking). A test (DockerRuntimeStageTests) checks that list against the release binary's ldd output.

# --- build stage ---
FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product reactor-server \
    && cp "$(swift build -c release --show-bin-path)/reactor-server" /reactor-server

# --- runtime stage ---
FROM debian:bookworm-slim
# RUNTIME-PACKAGES (kept in sync with the test): the shared libraries the binary needs besides glibc.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libstdc++6 libgcc-s1 zlib1g libcurl4 libxml2 ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin reactor \
    && mkdir -p /app /data && chown reactor /data
WORKDIR /app
COPY --from=build /reactor-server /app/reactor-server
COPY Config /app/Config
USER reactor
ENV REACTOR_CONFIG=/app/Config/server.json \
    REACTOR_HTTP_HOST=0.0.0.0 \
    REACTOR_STORAGE_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/reactor-server"]
