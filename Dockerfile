# callerid-gateway container: built in one stage, run from production dependencies only, as a non-root user.
# No secrets are baked in: UPSTREAM_*, GATEWAY_TOKEN_SECRET, GATEWAY_CLIENTS, ... come from the environment at run time.
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
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0
WORKDIR /app
# Owned by root and only readable by the app's user: the running process cannot change its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 8080
# slim has no curl: Node's own fetch asks /healthz.
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The gateway drains in-flight requests on SIGTERM within SHUTDOWN_TIMEOUT_SECONDS (default 10);
# keep the orchestrator's grace period (docker stop -t, terminationGracePeriodSeconds) above it.
STOPSIGNAL SIGTERM
CMD ["node", "dist/runtime/node/main.js"]
