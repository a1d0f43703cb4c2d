// The export's retry schedule: the backoff grows by 1.5 from 1 s to 5 s with a fifth of jitter either way, a
// collector's Retry-After replaces it, and no wait runs past the export timeout or the attempts' bound.
import { describe, expect, it } from 'vitest';
import { backoffMs, MAX_ATTEMPTS, nextTryIn } from './export-retry.js';

describe('the export retry schedule', () => {
  it('backs off 1 s, 1.5 s, 2.25 s, 3.375 s, then 5 s at most, each moved by up to a fifth', () => {
    expect([1, 2, 3, 4, 5, 9].map((n) => backoffMs(n, 0.5))).toEqual([1_000, 1_500, 2_250, 3_375, 5_000, 5_000]);
    expect(backoffMs(1, 0)).toBe(800);
    expect(backoffMs(1, 0.999_999)).toBe(1_200);
    expect(backoffMs(9, 0)).toBe(4_000);
  });

  it("waits what the collector's Retry-After asks, in seconds or as a date, instead of the backoff", () => {
    const now = Date.parse('2026-11-28T10:00:00Z');
    const unavailable = { cause: 'unavailable', retry: true } as const;
    expect(nextTryIn({ ...unavailable, retryAfter: '3' }, 1, now, now + 10_000)).toBe(3_000);
    expect(nextTryIn({ ...unavailable, retryAfter: 'Sat, 28 Nov 2026 10:00:04 GMT' }, 1, now, now + 10_000)).toBe(
      4_000,
    );
    const backoff = nextTryIn({ ...unavailable, retryAfter: 'soon' }, 2, now, now + 10_000)!;
    expect(backoff).toBeGreaterThanOrEqual(1_200);
    expect(backoff).toBeLessThanOrEqual(1_800);
  });

  it('gives up on a final failure, past the attempts, and on a wait that would end past the deadline', () => {
    const now = 1_000_000;
    expect(nextTryIn({ cause: 'refused', retry: false }, 1, now, now + 10_000)).toBeUndefined();
    expect(
      nextTryIn({ cause: 'unavailable', retry: true, retryAfter: '0' }, MAX_ATTEMPTS, now, now + 10_000),
    ).toBeUndefined();
    expect(nextTryIn({ cause: 'unavailable', retry: true, retryAfter: '0' }, MAX_ATTEMPTS - 1, now, now + 10_000)).toBe(
      0,
    );
    expect(nextTryIn({ cause: 'unavailable', retry: true, retryAfter: '10' }, 1, now, now + 10_000)).toBeUndefined();
    expect(nextTryIn({ cause: 'unreachable', retry: true }, 1, now, now + 700)).toBeUndefined();
  });
});
