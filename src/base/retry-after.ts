// A `Retry-After` field (RFC 9110 section 10.2.3): how long an answer asked its client to wait, read the one way
// for the upstream's 429 and the trace collector's 429 and 503.

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
