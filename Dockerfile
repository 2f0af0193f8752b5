# reactor-server container: build with the Swift 6.3 toolchain, run on a slim Debian with only what
# the static-stdlib binary still links dynamically. A test (DockerRuntimeStageTests) checks the list
# below against the release binary's NEEDED entries and starts the binary from a folder holding only
# what this file copies.

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
# The shared libraries the binary needs besides glibc (libc6 is in the base image): libcurl4 for
# URLSession (the search example's upstream), libstdc++6 and libgcc-s1 for the Swift runtime.
ARG RUNTIME_LIBRARIES="libcurl4 libstdc++6 libgcc-s1"
# ca-certificates for https upstreams; curl for the HEALTHCHECK.
RUN apt-get update \
    && apt-get install -y --no-install-recommends $RUNTIME_LIBRARIES ca-certificates curl \
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
