// The UTC day that daily quotas and the budget count in: its name (part of the counter key) and its end.

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `now` falls in. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** Epoch ms of the next UTC midnight after `now` (a quota's reset). */
export function nextUtcMidnight(now: number): number {
  return (Math.floor(now / DAY_MS) + 1) * DAY_MS;
}

/** Whole seconds until the next UTC midnight, at least 1: a `Retry-After` for a daily limit. */
export function secondsUntilNextUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((nextUtcMidnight(now) - now) / 1000));
}
