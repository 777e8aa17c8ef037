# recordings-gateway image: compile in a build stage, run dist/ with production dependencies only
# on Node 24 LTS as the non-root `node` user (DESIGN A1).
# test/integration/docker-image.test.ts replays the COPY and RUN steps below without a Docker engine.
#
#   docker build -t recordings-gateway .
#   docker run --rm -p 8080:8080 --stop-timeout 20 \
#     -e HOST_SUFFIX=.recordings.example.com \
#     -e UPSTREAM_URL='https://{workspace}.recordings.internal/api/external/v2' \
#     recordings-gateway
#   curl -H 'X-Api-Key: …' https://acme.recordings.example.com/api/external/v2/recordings   # via your DNS/LB
#
# HOST_SUFFIX is the domain your workspace hosts share: the workspace is the Host header minus it.
# The default (.localhost) matches only acme.localhost-style hosts, so without it every real
# hostname answers 404 NO_WORKSPACE. deploy/compose.yaml runs the whole stack with the simulator.
#
# The admin listener (/metrics, /healthz, /readyz, /admin/purge) stays on loopback by default, which
# the HEALTHCHECK below can still reach. To let Prometheus scrape it, or a kubelet probe it, from
# outside the container, add `-e ADMIN_HOST=0.0.0.0 -p 9091:9091`; POST /admin/purge stays off
# until ADMIN_TOKEN is set.

# An exact minor line of Node 24 LTS on Debian 12: patch releases only, never a surprise major.
ARG NODE_IMAGE=node:24.20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json ./
# Dependencies first, in their own layer, so a source change does not reinstall them. No install
# scripts: only dev dependencies of testcontainers have any, and the compiler needs none of them.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src/ src/
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
ENV NODE_ENV=production NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
# glibc: allocations of 128 KiB and up (the L1 arena's segments) always get their own mapping, so a
# freed segment returns to the system instead of leaving a hole in the heap (docs/operations.md).
ENV MALLOC_MMAP_THRESHOLD_=131072
COPY package.json package-lock.json ./
# --ignore-scripts also skips our own `prepare` (the compiler is a dev dependency; dist/ comes from
# the build stage).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
# dist/config/load.js reads ../../config/default.yaml, so config/ sits beside dist/.
COPY config/ config/
# dist/openapi/document.js reads ../../openapi/recordings-gateway.yaml (served at GET /openapi.json).
COPY openapi/ openapi/
COPY --from=build /app/dist/ dist/
# Files stay owned by root: the process can read its code and config but not rewrite them.
USER node
EXPOSE 8080 9091
# Slim images carry no curl; node's own fetch asks the admin listener whether the process is alive.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.ADMIN_PORT||9091)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM: /readyz 503 and keep serving for server.drainDelay (5s), then stop accepting, finish
# in-flight requests within server.shutdownGrace (10s), exit 0. Docker's default stop timeout is
# 10 s, hence --stop-timeout 20 above (stop_grace_period in deploy/compose.yaml).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
