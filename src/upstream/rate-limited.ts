// An upstream 429: how long it asked the gateway to wait (`Retry-After`, RFC 9110 section 10.2.3).
import { GatewayError } from '../base/errors.js';

/**
 * Milliseconds to wait from `now`, or null when the value is absent or neither form: delay-seconds
 * (`120`) or an HTTP-date (`Wed, 21 Oct 2015 07:28:00 GMT`; a date in the past means 0).
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    // A value too long to be a real delay (Number() of 400 digits is Infinity) is unreadable, not forever.
    const ms = Number(text) * 1000;
    return Number.isSafeInteger(ms) ? ms : null;
  }
  // Only the date forms: Date.parse also takes "3" or "1 2" as dates.
  if (!/^[A-Za-z]{3},? /.test(text) && !/^[A-Za-z]+day, /.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

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
