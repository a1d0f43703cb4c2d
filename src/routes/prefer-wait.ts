// `Prefer: wait=N` (RFC 7240): how long a caller is willing to wait for a lookup, and the deadline it sets.

export interface LookupDeadline {
  /** Milliseconds the caller waits for the answer before it gets a stale entry or a 504. */
  ms: number;
  /** The `Preference-Applied` value when the caller's `wait` was honoured (bounded), else undefined. */
  applied: string | undefined;
}

const WAIT_VALUE = /^\d{1,9}(?:\.\d{1,6})?$/;

/**
 * The first `wait` preference's value in seconds, or undefined when there is none or it is not a
 * non-negative decimal: RFC 7240 section 2 says a preference given more than once counts only the first
 * time, and one that cannot be understood is ignored (the request is not refused).
 */
export function preferredWaitSeconds(prefer: string | undefined): number | undefined {
  if (prefer === undefined || !/wait/i.test(prefer)) return undefined;
  for (const item of prefer.split(',')) {
    // A preference is `token [= value] *(; parameter)`; parameters of `wait` mean nothing and are dropped.
    const head = item.split(';', 1)[0]!;
    const eq = head.indexOf('=');
    const name = (eq === -1 ? head : head.slice(0, eq)).trim().toLowerCase();
    if (name !== 'wait') continue;
    if (eq === -1) return undefined;
    let value = head.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return WAIT_VALUE.test(value) ? Number(value) : undefined;
  }
  return undefined;
}

/**
 * The caller's deadline: its `wait` bounded by `maxMs` (UPSTREAM_TIMEOUT_MS: waiting longer than the upstream
 * call may take cannot give a better answer), or `defaultMs` when it stated none.
 */
export function lookupDeadline(prefer: string | undefined, defaultMs: number, maxMs: number): LookupDeadline {
  const seconds = preferredWaitSeconds(prefer);
  if (seconds === undefined) return { ms: Math.min(defaultMs, maxMs), applied: undefined };
  const ms = Math.min(Math.round(seconds * 1000), maxMs);
  // What was applied, in seconds: the caller's value, or the bound when it asked for more.
  return { ms, applied: `wait=${ms / 1000}` };
}
