// An upstream 429: how long it asked the gateway to wait (`Retry-After`, RFC 9110 section 10.2.3).
import { GatewayError } from '../base/errors.js';
import { parseRetryAfter } from '../base/retry-after.js';

/**
 * The pause an upstream 429 imposes: its Retry-After capped at `maxMs` (UPSTREAM_COOLDOWN_MAX_SECONDS), or null
 * when it gave none that can be read (UPSTREAM_COOLDOWN_SECONDS then). One upstream answer never pauses the
 * deployment longer than the operator allows.
 */
export function boundedRetryAfter(value: string | null | undefined, now: number, maxMs: number): number | null {
  const ms = parseRetryAfter(value, now);
  return ms === null ? null : Math.min(ms, maxMs);
}

/** The upstream answered 429; `retryAfterMs` is null when it did not say how long (UPSTREAM_COOLDOWN_SECONDS then). */
export class UpstreamRateLimitedError extends GatewayError {
  constructor(readonly retryAfterMs: number | null) {
    super('upstream_rate_limited', 'the upstream is rate limiting the gateway', {
      headers: retryAfterMs === null ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    });
  }
}
