// Builds the gateway's services once from the configuration and what the runtime provides.
import type { Context } from 'hono';
import type { LookupCache } from '../lookup/lookup-cache.js';
import type { LookupService } from '../lookup/lookup-service.js';
import { createLookupChain } from './lookup-chain.js';
import { createBasicCredentials } from '../auth/basic-credentials.js';
import { ClientRegistry, clientEntriesOf } from '../auth/client-registry.js';
import type { ClientEntry } from '../auth/clients-file.js';
import { createGatewayTokens, type GatewayTokens } from '../auth/gateway-tokens.js';
import { withFederatedTokens } from '../auth/bearer-tokens.js';
import { createFederatedTokens } from '../auth/federated/federated-tokens.js';
import type { TrustedIssuer } from '../auth/federated/trusted-issuers.js';
import type { IdpDocumentStore } from '../shared-state/idp-documents.js';
import { processRevocations, type Revocations } from '../auth/revocations.js';
import { hs256Jwt } from './hs256-jwt.js';
import { createLoginThrottle, type LoginThrottle } from '../limits/login-throttle.js';
import type { Clock } from '../base/clock.js';
import type { Config } from '../config/config.js';
import type { DocsAssets } from '../base/docs-assets.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsEndpoint } from '../observability/metrics.js';
import { createRequestRecorder, type RequestRecorder } from '../observability/request-recorder.js';
import { createKeyedHasher, type KeyedHasher, type SyncHmac } from '../observability/keyed-hash.js';
import type { Telemetry } from '../observability/telemetry.js';
import { tracingOff, type Tracing } from '../observability/tracing/tracing.js';
import { createNumberNormalizer, type NumberNormalizer } from '../search/normalize.js';
import { createConsoleRateLimiter, type ConsoleRateLimiter } from '../limits/console-limits.js';
import { createCostGuard, type CostGuard } from '../guard/cost-guard.js';
import { createFallbackCounterStore, type CounterStoreErrorMode } from '../shared-state/fallback-counter-store.js';
import type { UpstreamHttp } from '../base/upstream-http.js';
import { createClientAuthenticator, type ClientAuthenticator } from '../auth/client-authenticator.js';
import { createSearchJson, type SearchJson } from '../operations/search/search-json.js';
import { createSearchUseCase, type SearchUseCase } from '../search/search-use-case.js';
import { clientAddress, trustedForwardedEntry } from '../limits/client-address.js';
import { createCertificateAuth, type CertificateAuth } from '../auth/certificates/certificate-auth.js';
import type { PeerCertificate } from '../auth/certificates/peer-certificate.js';
import type { SharedLimiters } from '../limits/limit.js';
import { createTokenManager, type TokenManager } from '../upstream/token-manager.js';
import { inProcess, type RunInBackground } from '../shared-state/background.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import type { LookupTier } from '../shared-state/lookup-tier.js';
import { createMemoryCounterStore } from '../shared-state/memory/memory-counter-store.js';
import { createStoreHealth } from '../shared-state/store-health.js';
import type { TokenStore } from '../shared-state/token-store.js';

/** What only the runtime can provide: the network, time, and where logs and metrics go. */
export interface RuntimeDeps {
  http: UpstreamHttp;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  /** The metrics registry's owner; its `telemetry` is usually the one above. Absent: no /metrics route. */
  metrics?: MetricsEndpoint;
  /** The peer address of the connection (Node: the socket; Workers: CF-Connecting-IP), before any proxy logic. */
  peerAddress: (c: Context) => string | undefined;
  /** The client certificate of a request (Node: the TLS connection or a trusted proxy's header; Workers: cf.tlsClientAuth). */
  peerCertificate?: (c: Context) => PeerCertificate | undefined;
  /** The request target exactly as sent, before dot segments were resolved; where the runtime still has it (Node). */
  requestTarget?: (c: Context) => string | undefined;
  /** The request's HTTP version (`1.1`, `2`) for its server span, where the runtime tells it. */
  protocolOf?: (c: Context) => string | undefined;
  /** A synchronous HMAC-SHA-256 where the runtime has one (Node), for the keyed number hash in logs. */
  syncHmac?: SyncHmac;
  /**
   * Shared state (docs/architecture.md, "Ports and adapters"): built by the runtime (Redis on Node with REDIS_URL, Durable
   * Objects and the Cache API on Workers). Absent: per-process state, exactly the single-process gateway.
   */
  tokenStore?: TokenStore;
  lookupTier?: LookupTier;
  counters?: CounterStore;
  /** The rate limits' store (rate-limiter-flexible): RateLimiterRedis, or the Durable Object store on Workers. */
  limiters?: SharedLimiters;
  /** The clients as the runtime read them (the clients file). Absent: GATEWAY_CLIENTS and its companion variables. */
  clients?: readonly ClientEntry[];
  /** The clients file's trusted issuers, whose access tokens name clients by their `identities`. */
  issuers?: readonly TrustedIssuer[];
  /**
   * How trusted issuers' documents are fetched: with `fetch` (absent: the global one), over plain http to any host
   * when `allowHttp` (Node outside NODE_ENV=production), else https or a loopback host only; `shared`: the copies the
   * processes of one place share (Workers: the data centre's Cache API), absent on Node.
   */
  identityProviders?: { fetch?: typeof fetch; allowHttp: boolean; shared?: IdpDocumentStore };
  /** Revoked gateway tokens for the deployment (Redis, the Durable Object). Absent: revocations hold in this process. */
  revocations?: Revocations;
  /** Work that must outlive the response (Workers: ctx.waitUntil). Absent: run in process. */
  background?: RunInBackground;
  /** Called with every finished request after it was recorded (Workers: one Analytics Engine data point). */
  onRequest?: RequestRecorder | undefined;
  /** Swagger UI's files for /docs (Node: from swagger-ui-dist). Absent: /docs says so; /openapi.json still works. */
  docsAssets?: DocsAssets;
  /** The runtime's tracing (createNodeTracing, createWorkerTracing). Absent: off, a caller's context only passed on. */
  tracing?: Tracing;
}

/** A request's client certificate (none where the runtime has none) and the client a certificate is. */
interface ClientCertificates {
  /** Whether the runtime reads client certificates at all (TLS_CLIENT_CA_FILE or TLS_CLIENT_CERT_HEADER; Workers). */
  enabled: boolean;
  of: (c: Context) => PeerCertificate | undefined;
  auth: CertificateAuth;
}

export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  metrics: MetricsEndpoint | undefined;
  /** Keyed hashes of numbers for logs (LOG_HASH_KEY). */
  numberHasher: KeyedHasher;
  /** Writes a finished request's metrics and log line (the access log and Node's search door). */
  recordRequest: RequestRecorder;
  peerAddress: (c: Context) => string | undefined;
  requestTarget: ((c: Context) => string | undefined) | undefined;
  protocolOf: ((c: Context) => string | undefined) | undefined;
  consoleLimiter: ConsoleRateLimiter;
  clients: ClientRegistry;
  gatewayTokens: GatewayTokens;
  /** Revoked gateway tokens (POST /oauth2/revoke, /admin/tokens/revoke-client), checked by `gatewayTokens`. */
  revocations: Revocations;
  /** Failed logins per client id and address, and per address (LOGIN_FAILURES_*). */
  loginThrottle: LoginThrottle;
  /** A registered client by gateway token or HTTP Basic id and secret (the PBX routes and the JSON search). */
  authenticateClient: ClientAuthenticator;
  /** A request's client certificate, and the client a certificate is. */
  clientCertificates: ClientCertificates;
  /** The entry of an X-Forwarded-* field the outermost trusted proxy wrote (TRUST_PROXY_HOPS); none without one. */
  forwardedEntry: (field: string | undefined) => string | undefined;
  /** The caller's address of a request as the limits count it: the peer, or X-Forwarded-For behind trusted proxies. */
  addressOf: (c: Context) => string | undefined;
  /** The search use case, whoever asks: the JSON search, CNAM, each batch item and the console render its outcome. */
  search: SearchUseCase;
  /** The search's JSON renderer, GET /v2/contacts/search whole: the route and Node's listener are its doors. */
  searchJson: SearchJson;
  normalizer: NumberNormalizer;
  upstreamTokens: TokenManager;
  lookup: LookupService;
  /** The per-number cache behind `lookup`: purged by the admin route, sized by the metrics. */
  lookupCache: LookupCache;
  /** Limits, quotas and budgets: shared by the deployment when the runtime provides a store, else this process's. */
  counters: CounterStore;
  /** The cost guard of the paid upstream: client rates, quotas, budget, concurrency, 429 cooldown, breaker. */
  guard: CostGuard;
  background: RunInBackground;
  docsAssets: DocsAssets | undefined;
  /** Spans of every request and of the calls it makes; its drops on the metrics, its flush on shutdown. */
  tracing: Tracing;
}

export async function createServices(config: Config, runtime: RuntimeDeps): Promise<Services> {
  const { upstream } = config;
  if (!upstream) throw new Error('no upstream configured: the runtime must start demo mode or refuse to start');
  if (!config.gatewayTokens.secret) throw new Error('GATEWAY_TOKEN_SECRET is missing');
  const { clock, logger, telemetry } = runtime;
  const clients = clientRegistryOf(config, runtime, clock);

  const upstreamTokens = createUpstreamTokens(config, upstream, runtime);
  const background = runtime.background ?? inProcess;
  const shared = sharedCounters(runtime);
  const { counters, counterHealth } = shared;
  const guard = createGuard(config, upstream, runtime, shared, background, clients);
  // One search, in order: the local LRU, the shared tier, the cost guard, the upstream (src/services/lookup-chain.ts).
  const { lookup, lookupCache } = createLookupChain(config, runtime, { upstreamTokens, guard, background });
  const loginHasher = createKeyedHasher({
    key: `login-throttle:${config.gatewayTokens.secret}`,
    syncHmac: runtime.syncHmac,
    memoSize: 10_000,
  });
  const revocations = runtime.revocations ?? processRevocations(clock, config.revocations);
  const gatewayTokens = await createBearerTokens(config, runtime, clients, revocations);
  const loginThrottle = createLoginThrottle({
    // While the shared store is down, each process counts failed logins alone.
    shared: runtime.limiters,
    health: counterHealth,
    failuresPerClient: config.login.failuresPerClient,
    failuresPerAddress: config.login.failuresPerAddress,
    windowSeconds: config.login.failureWindowSeconds,
    headerFormat: config.rateLimitHeaders,
    keyOf: (text) => loginHasher.hash(text),
    clock,
  });
  const clientCertificates: ClientCertificates = {
    enabled: runtime.peerCertificate !== undefined,
    of: runtime.peerCertificate ?? (() => undefined),
    auth: createCertificateAuth({ match: clients.certificateClient, logger }),
  };
  const authenticateClient = createClientAuthenticator({
    gatewayTokens,
    certificates: clientCertificates.auth,
    // Wrong Basic credentials count against the same failed-login budget as POST /token/login.
    basic: createBasicCredentials({ clients, loginThrottle, logger, clock }),
  });
  const normalizer = createNumberNormalizer({ defaultRegion: config.defaultRegion });
  const numberHasher = createKeyedHasher({ key: config.log.hashKey, syncHmac: runtime.syncHmac });
  const consoleLimiter = createConsoleLimiter(config, runtime, counterHealth);
  const search = createSearchUseCase({
    gatewayTokens,
    authenticateClient,
    consoleLimiter,
    normalizer,
    lookup,
    guard,
    telemetry,
    logger,
    clock,
    upstreamTimeoutMs: upstream.timeoutMs,
    trustProxyHops: config.trustProxyHops,
  });

  return {
    config,
    clock,
    logger,
    telemetry,
    metrics: runtime.metrics,
    numberHasher,
    recordRequest: withRequestHook(
      createRequestRecorder({ logger, metrics: runtime.metrics, hasher: numberHasher }),
      runtime.onRequest,
    ),
    peerAddress: runtime.peerAddress,
    requestTarget: runtime.requestTarget,
    protocolOf: runtime.protocolOf,
    docsAssets: runtime.docsAssets,
    consoleLimiter,
    clients,
    gatewayTokens,
    revocations,
    loginThrottle,
    authenticateClient,
    clientCertificates,
    normalizer,
    forwardedEntry: (field) => trustedForwardedEntry(field, config.trustProxyHops),
    addressOf: (c) => clientAddress(runtime.peerAddress(c), c.req.header('x-forwarded-for'), config.trustProxyHops),
    search,
    searchJson: createSearchJson(search),
    upstreamTokens,
    lookup,
    lookupCache,
    counters,
    guard,
    background,
    tracing: runtime.tracing ?? tracingOff,
  };
}

/** The clients the runtime read (the clients file, with its issuers), else those of GATEWAY_CLIENTS and its companions. */
function clientRegistryOf(config: Config, runtime: RuntimeDeps, clock: Clock): ClientRegistry {
  const { quotas, quotaPerDay } = config.guard;
  return new ClientRegistry(
    runtime.clients ?? clientEntriesOf(config.clients, config.adminClients, quotas),
    clock,
    { fixed: new Map([...quotas].filter(([id]) => id === 'console')), perDay: quotaPerDay },
    runtime.issuers,
  );
}

/** Bearer tokens of either issuer: the gateway's own (HS256) and trusted identity providers' (the clients file). */
async function createBearerTokens(
  config: Config,
  runtime: RuntimeDeps,
  clients: ClientRegistry,
  revocations: Revocations,
): Promise<GatewayTokens> {
  const { clock } = runtime;
  const ownTokens = await createGatewayTokens({
    jwt: hs256Jwt,
    isRegistered: clients.has,
    revocations: revocations.list,
    secret: config.gatewayTokens.secret!,
    previousSecrets: config.gatewayTokens.previousSecrets,
    ttlSeconds: config.gatewayTokens.ttlSeconds,
    ttlOf: (clientId) => clients.tokenTtlSeconds(clientId),
    clock,
  });
  const federatedTokens = createFederatedTokens({
    directory: clients,
    clock,
    logger: runtime.logger,
    telemetry: runtime.telemetry,
    fetch: runtime.identityProviders?.fetch ?? ((input, init) => fetch(input, init)),
    allowHttp: runtime.identityProviders?.allowHttp ?? false,
    shared: runtime.identityProviders?.shared,
    background: runtime.background,
  });
  return withFederatedTokens(ownTokens, federatedTokens, clock);
}

/** The console's limits, per address (a keyed hash) and in total, in the shared store where there is one. */
function createConsoleLimiter(
  config: Config,
  runtime: RuntimeDeps,
  health: SharedCounters['counterHealth'],
): ConsoleRateLimiter {
  // Derived from the signing key, which every replica already shares, so replicas sharing a Redis agree.
  const addressHasher = createKeyedHasher({
    key: `console-rate-limit:${config.gatewayTokens.secret}`,
    syncHmac: runtime.syncHmac,
    memoSize: 10_000,
  });
  return createConsoleRateLimiter({
    ...config.console.rate,
    onStoreError: config.guard.onStoreError,
    shared: runtime.limiters,
    health,
    headerFormat: config.rateLimitHeaders,
    logger: runtime.logger,
    clock: runtime.clock,
    keyOf: (address) => addressHasher.hash(address),
  });
}

function withRequestHook(record: RequestRecorder, hook: RequestRecorder | undefined): RequestRecorder {
  if (!hook) return record;
  return function recordRequest(r) {
    record(r);
    hook(r);
  };
}

function createUpstreamTokens(config: Config, upstream: NonNullable<Config['upstream']>, runtime: RuntimeDeps) {
  const { logger, telemetry } = runtime;
  return createTokenManager({
    http: runtime.http,
    authUrl: upstream.authUrl,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    timeoutMs: upstream.timeoutMs,
    expiresInUnit: upstream.expiresInUnit,
    refreshAheadSeconds: upstream.refreshAheadSeconds,
    background: runtime.background,
    clock: runtime.clock,
    telemetry,
    logger,
    store: runtime.tokenStore,
    storeHealth:
      runtime.tokenStore && createStoreHealth({ store: 'token', kind: runtime.tokenStore.kind, logger, telemetry }),
    storeTimeoutMs: config.sharedStoreTimeoutMs,
    tracer: runtime.tracing?.tracer,
  });
}

/** The counter store and its health; one health per shared store, shared by its users: one log line and one metric move per transition. */
interface SharedCounters {
  counters: CounterStore;
  counterHealth: ReturnType<typeof createStoreHealth> | undefined;
  /** The store as a user sees it while it is down: per process (`memory`) or as the setting says. */
  whenDown: (mode: CounterStoreErrorMode) => CounterStore;
}

function sharedCounters(runtime: RuntimeDeps): SharedCounters {
  const { clock, logger, telemetry } = runtime;
  const counters = runtime.counters ?? createMemoryCounterStore({ clock });
  const counterHealth = runtime.counters
    ? createStoreHealth({ store: 'counter', kind: runtime.counters.kind, logger, telemetry })
    : undefined;
  return {
    counters,
    counterHealth,
    whenDown: (mode) =>
      counterHealth ? createFallbackCounterStore({ shared: counters, mode, health: counterHealth, clock }) : counters,
  };
}

function createGuard(
  config: Config,
  upstream: NonNullable<Config['upstream']>,
  runtime: RuntimeDeps,
  shared: SharedCounters,
  background: RunInBackground,
  clients: ClientRegistry,
): CostGuard {
  return createCostGuard({
    // The registry's quotas: a reload of the clients file reaches the guard's next charge.
    config: { ...config.guard, quotas: clients.quotas },
    timeoutMs: upstream.timeoutMs,
    clients: { ids: () => clients.ids(), has: clients.has },
    rateOf: clients.ratePerMinute,
    // Rates and search counts are counted here first anyway: while the store is down they stay per process.
    counters: shared.whenDown('memory'),
    limiters: runtime.limiters,
    limiterHealth: shared.counterHealth,
    headerFormat: config.rateLimitHeaders,
    quotaCounters: shared.whenDown(config.guard.onStoreError),
    // The 429 cooldown and the breaker's opening for the deployment; per process while the store is down.
    pauseCounters: shared.counterHealth && shared.whenDown('memory'),
    clock: runtime.clock,
    telemetry: runtime.telemetry,
    background,
  });
}
