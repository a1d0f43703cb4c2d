# callerid-gateway container: built in one stage, run from production dependencies only, as a non-root user.
# No secrets are baked in: UPSTREAM_*, GATEWAY_TOKEN_SECRET, GATEWAY_CLIENTS, ... come from the environment at run time.
#
# The base image, one argument for every stage. A release build pins it by digest, so the same Dockerfile gives
# the same base however the tag moves. Resolve the digest of the tag's multi-platform index where a registry is
# reachable, and build with it (or write it here in place of the tag):
#   docker buildx imagetools inspect node:24-slim --format '{{json .Manifest.Digest}}'
#   docker build --build-arg NODE_IMAGE=node:24-slim@sha256:<that digest> -t callerid-gateway .
# This file keeps the tag: no digest was resolved where it was written (no registry reachable), and a digest
# that was not resolved would be a guess. docs/operations.md, "Container", has the update routine.
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
# tini as PID 1: it forwards SIGTERM and SIGINT to Node (which drains in-flight requests on them) and reaps any
# process that ends up orphaned in the container; Node as PID 1 would do neither for others.
RUN apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=8080 \
    METRICS_PORT=9464 \
    METRICS_HOST=0.0.0.0 \
    HOST=0.0.0.0
WORKDIR /app
# Owned by root and writable by root only: the app's user (node) reads its code but cannot change it. The files
# are readable by every user of the image (they hold no secret: those come from the environment).
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
# 8080: the API. 9464: /metrics (METRICS_PORT); publish it to the monitoring network only, never beside the API.
EXPOSE 8080 9464
# bash's /dev/tcp asks /healthz: no new Node process every 15 s (slim has neither curl nor wget).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-8080} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r _ status _ <&3 && [ \"$status\" = 200 ]"]
# The gateway drains in-flight requests on SIGTERM within SHUTDOWN_TIMEOUT_SECONDS (default 10);
# keep the orchestrator's grace period (docker stop -t, terminationGracePeriodSeconds) above it.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/runtime/node/main.js"]
