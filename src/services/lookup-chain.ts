// One search of a number, as every route asks it (the API, the console, CNAM, batch), built in the order a
// request meets it:
//   1. the local LRU (lookup/lookup-cache.ts): a fresh entry answers at once, a stale one while it revalidates;
//   2. the shared tier (lookup/tiered-load.ts, Redis or the Cache API): another replica's answer, or the fill
//      lease that makes one replica the one to ask the upstream;
//   3. the cost guard (guard/upstream-guard.ts): cooldown, breaker, quota and budget reservation, a fair share
//      of the upstream slots;
//   4. the upstream (upstream/search-client.ts): the held token, the call, the answer read once.
// Deadlines and Cache-Status are the lookup service's (lookup/lookup-service.ts), around all four.
import type { Config } from '../config/config.js';
import type { CostGuard } from '../guard/cost-guard.js';
import { createLookupCache, type LookupCache } from '../lookup/lookup-cache.js';
import { createLookupService, type LookupService } from '../lookup/lookup-service.js';
import type { SharedTierOptions } from '../lookup/tiered-load.js';
import { createKeyedHasher } from '../observability/keyed-hash.js';
import type { Clock } from '../base/clock.js';
import type { Logger } from '../observability/logger.js';
import type { SyncHmac } from '../observability/keyed-hash.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { Tracing } from '../observability/tracing/tracing.js';
import type { LookupTier } from '../shared-state/lookup-tier.js';
import type { UpstreamHttp } from '../base/upstream-http.js';
import type { RunInBackground } from '../shared-state/background.js';
import { createStoreHealth } from '../shared-state/store-health.js';
import { UPSTREAM_BODY } from '../upstream/search-client.js';
import { createSearchClient } from '../upstream/search-client.js';
import type { TokenManager } from '../upstream/token-manager.js';

export interface LookupChain {
  lookup: LookupService;
  /** The local LRU: purged by the admin route, sized by the metrics. */
  lookupCache: LookupCache;
}

/** What the runtime gives the search path (a part of services.ts's RuntimeDeps). */
export interface LookupChainRuntime {
  http: UpstreamHttp;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
  lookupTier?: LookupTier | undefined;
  background?: RunInBackground | undefined;
  syncHmac?: SyncHmac | undefined;
  /** Spans of the lookup and the upstream call, under each request's; absent: off. */
  tracing?: Tracing | undefined;
}

export function createLookupChain(
  config: Config,
  runtime: LookupChainRuntime,
  parts: { upstreamTokens: TokenManager; guard: CostGuard; background: RunInBackground },
): LookupChain {
  const { upstream } = config;
  if (!upstream) throw new Error('no upstream configured');
  const { clock, logger, telemetry } = runtime;

  // 4. The upstream.
  const upstreamSearch = createSearchClient({
    http: runtime.http,
    upstreamTokens: parts.upstreamTokens,
    baseUrl: upstream.baseUrl,
    timeoutMs: upstream.timeoutMs,
    clock,
    telemetry,
    logger,
    // The search client's one parse of the body also says "no listing", so the cache need not parse it again.
    resultsPath: UPSTREAM_BODY.resultsPath,
    maxRetryAfterMs: config.guard.cooldownMaxSeconds * 1000,
    tracer: runtime.tracing?.tracer,
  });
  // 3. The cost guard around it: runs only for a real upstream call (not for hits, stale answers or joiners),
  // the one place to charge it.
  const guardedLoad = parts.guard.guardLoad(upstreamSearch.search, runtime.tracing?.tracer);
  // 2. The shared tier, where the runtime has one; 1. the local LRU in front of all.
  const lookupCache = createLookupCache({
    load: guardedLoad,
    clock,
    background: runtime.background,
    ...config.cache,
    // One setting says where the results live, for the console filter and for "no listing" alike.
    resultsPath: UPSTREAM_BODY.resultsPath,
    shared: runtime.lookupTier && sharedTier(config, runtime, runtime.lookupTier, parts.background),
    tracer: runtime.tracing?.tracer,
  });
  return {
    lookup: createLookupService({
      cache: lookupCache,
      telemetry,
      othersFailure: parts.guard.othersFailure,
      background: parts.background,
      upstreamTimeoutMs: upstream.timeoutMs,
      tracer: runtime.tracing?.tracer,
    }),
    lookupCache,
  };
}

/** The shared tier's options: keys are keyed hashes under a key derived from the signing key, which replicas share. */
function sharedTier(
  config: Config,
  runtime: LookupChainRuntime,
  tier: LookupTier,
  background: RunInBackground,
): SharedTierOptions {
  const keys = createKeyedHasher({
    key: `lookup-tier:${config.gatewayTokens.secret}`,
    syncHmac: runtime.syncHmac,
    memoSize: 10_000,
  });
  const upstreamTimeoutMs = config.upstream?.timeoutMs ?? 0;
  return {
    tier,
    keyOf: (e164) => keys.hash(e164),
    health: createStoreHealth({
      store: 'lookup',
      kind: tier.kind,
      logger: runtime.logger,
      telemetry: runtime.telemetry,
    }),
    background,
    timeoutMs: config.sharedStoreTimeoutMs,
    // Another replica's upstream call for the same number ends within its own bound: waiting longer gains nothing.
    fillWaitMs: upstreamTimeoutMs,
    // Outlives the filler's one upstream call (bounded by UPSTREAM_TIMEOUT_MS), so a filler that died blocks nobody long.
    leaseMs: upstreamTimeoutMs + 1000,
    tracer: runtime.tracing?.tracer,
  };
}
