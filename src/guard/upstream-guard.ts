// Every real upstream search call passes here (it wraps the cache's load, which only runs for one): an upstream
// 429's cooldown, the circuit breaker, the caller's quota and the budget (reserved before the call, refunded
// when it fails), and the bound on calls in flight. Cached answers never reach it, so they are always served.
import type { Clock } from '../base/clock.js';
import { GatewayError } from '../base/errors.js';
import type { LookupContext } from '../lookup/types.js';
import type { UpstreamAnswer } from '../upstream/search-client.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { Span } from '../observability/tracing/span.js';
import type { Tracer } from '../observability/tracing/tracer.js';
import { UpstreamRateLimitedError } from '../upstream/rate-limited.js';
import type { Bulkhead } from './bulkhead.js';
import type { CircuitBreaker, Cooldown, SharedPauses } from './pauses.js';
import type { UpstreamCharges } from './upstream-charges.js';

/** The upstream search itself, given the instant the whole lookup must end by. */
/** The upstream search the guard lets through: the search client's own `search`. */
export type UpstreamSearch = (
  e164: string,
  options: { deadline: number; span?: Span | undefined },
) => Promise<UpstreamAnswer>;
export type CacheLoad = (e164: string, context: LookupContext) => Promise<UpstreamAnswer>;

export interface UpstreamGuardOptions {
  cooldown: Cooldown;
  breaker: CircuitBreaker;
  bulkhead: Bulkhead;
  charges: UpstreamCharges;
  /** The cooldown and the breaker's opening told to and learned from the other replicas. */
  pauses: SharedPauses;
  clock: Clock;
  telemetry: Telemetry;
  /** UPSTREAM_TIMEOUT_MS: a lookup's deadline, the queue wait included. */
  timeoutMs: number;
  /** The metric label of a caller: a registered id or `console`; undefined for anything else (not reported). */
  labelOf: (client: string) => string | undefined;
  /** A `guard queue` span of the wait for an upstream slot, under a recorded lookup's span; absent: none. */
  tracer?: Tracer | undefined;
}

const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));

function coolingDown(ms: number): GatewayError {
  return new GatewayError(
    'upstream_rate_limited',
    `The upstream asked the gateway to slow down; no new lookups for ${seconds(ms)} s. Cached answers are still served.`,
    {
      headers: { 'retry-after': seconds(ms) },
    },
  );
}

function breakerOpen(ms: number): GatewayError {
  return new GatewayError(
    'upstream_unavailable',
    `The upstream failed repeatedly; the gateway tries it again in ${seconds(ms)} s. Cached answers are still served.`,
    {
      headers: { 'retry-after': seconds(ms) },
    },
  );
}

export function guardUpstream(search: UpstreamSearch, options: UpstreamGuardOptions): CacheLoad {
  const { cooldown, breaker, bulkhead, charges, pauses, clock, telemetry, tracer } = options;

  /** Refusals that cost nothing: checked before anything is reserved, and again just before the call. */
  function refuseIfClosed(): void {
    const cool = cooldown.remainingMs();
    if (cool > 0) throw coolingDown(cool);
    const blocked = breaker.blockedForMs();
    if (blocked > 0) throw breakerOpen(blocked);
  }

  return async function guardedLoad(e164, context) {
    const deadline = clock() + options.timeoutMs;
    refuseIfClosed();
    // What the other replicas met (a 429, an open breaker) is asked beside the reservation every call makes
    // anyway, so a miss waits for no extra round trip and a hit never asks.
    const learned = pauses.learn();
    const reservation = await charges.reserve(context.client).finally(() => learned);
    let charged = false;
    try {
      refuseIfClosed();
      // The console counts as one caller: its share is one caller's, whatever its traffic.
      const queued = context.span?.recording === true ? tracer?.startSpan('guard queue', context.span) : undefined;
      const release = await bulkhead.acquire(context.client, deadline);
      queued?.end();
      if (typeof release !== 'function') {
        throw new GatewayError('upstream_busy', 'Too many upstream lookups are running; try again shortly.', {
          headers: { 'retry-after': '1' },
        });
      }
      try {
        // The wait for a slot may have outlasted a cooldown's start or the breaker's opening.
        refuseIfClosed();
        const ticket = breaker.admit();
        if (typeof ticket === 'number') throw breakerOpen(ticket);
        const label = options.labelOf(context.client);
        if (label !== undefined) telemetry.clientUpstreamCall(label);
        try {
          const answer = await search(e164, { deadline, span: context.span });
          ticket.success();
          charged = true;
          return answer;
        } catch (err) {
          if (err instanceof UpstreamRateLimitedError) {
            ticket.neutral();
            cooldown.start(err.retryAfterMs);
            // Told to the deployment before this caller hears its 503: a miss on any replica after it is refused.
            await pauses.announce('cooldown', cooldown.remainingMs());
            throw coolingDown(cooldown.remainingMs());
          }
          if (err instanceof GatewayError && (err.code === 'upstream_error' || err.code === 'upstream_timeout')) {
            if (ticket.failure()) await pauses.announce('breaker', breaker.blockedForMs());
          } else ticket.neutral();
          throw err;
        }
      } finally {
        release();
      }
    } finally {
      // A failed or refused call is not charged.
      if (!charged) await reservation.refund();
    }
  };
}
