// Reading a Retry-After: delay-seconds or an HTTP-date, measured on the injected clock.
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3_000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
  });

  it('reads an HTTP-date as the time left until it', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:00:45 GMT', NOW)).toBe(45_000);
    // The obsolete RFC 850 form is an HTTP-date too.
    expect(parseRetryAfter('Sunday, 01-Mar-26 12:01:00 GMT', NOW)).toBe(60_000);
  });

  it('takes a date in the past as no wait at all', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:59:00 GMT', NOW)).toBe(0);
  });

  it('answers null for an absent or unreadable value (the configured cooldown applies)', () => {
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter(undefined, NOW)).toBeNull();
    expect(parseRetryAfter('soon', NOW)).toBeNull();
    expect(parseRetryAfter('-5', NOW)).toBeNull();
    expect(parseRetryAfter('1.5', NOW)).toBeNull();
    expect(parseRetryAfter('3 4', NOW)).toBeNull();
  });
});
