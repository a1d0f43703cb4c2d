import { describe, expect, it } from 'vitest';
import { lookupDeadline, preferredWaitSeconds } from '../../src/routes/prefer-wait.js';

describe('Prefer: wait (RFC 7240)', () => {
  it.each([
    ['wait=2', 2],
    ['wait=0.5', 0.5],
    ['WAIT=1.25', 1.25],
    ['respond-async, wait=3', 3],
    ['wait="1.5"', 1.5],
    ['wait=2; foo=bar', 2],
    ['handling=lenient,wait=0', 0],
    ['wait=1, wait=9', 1],
    // Quoted values may hold commas, semicolons and escapes (RFC 7240 section 2, RFC 9110 quoted-string).
    ['foo="a,wait=5", wait=1', 1],
    ['foo="a;b\\"c,d", wait=2', 2],
    ['respond-async; note="x, y", wait=4', 4],
    ['wait=3;note="a,wait=9"', 3],
  ])('reads %s as %s seconds', (header, seconds) => {
    expect(preferredWaitSeconds(header)).toBe(seconds);
  });

  it.each([
    'wait',
    'wait=',
    'wait=-1',
    'wait=abc',
    'wait=1e3',
    'wait=0x10',
    'wait=1.2.3',
    'return=minimal',
    'waiting=2',
    'foo="a,wait=5"',
  ])('ignores the malformed or absent wait in %j', (header) => {
    expect(preferredWaitSeconds(header)).toBeUndefined();
  });

  it('honours a wait within the upstream timeout and says so', () => {
    expect(lookupDeadline('wait=0.75', 3000, 3000)).toEqual({ ms: 750, applied: 'wait=0.75' });
  });

  it('bounds a longer wait by the upstream timeout and says what was applied', () => {
    expect(lookupDeadline('wait=60', 3000, 3000)).toEqual({ ms: 3000, applied: 'wait=3' });
  });

  it('uses the default deadline, bounded, when no valid wait is given', () => {
    expect(lookupDeadline(undefined, 1000, 3000)).toEqual({ ms: 1000, applied: undefined });
    expect(lookupDeadline('wait=soon', 1000, 3000)).toEqual({ ms: 1000, applied: undefined });
    expect(lookupDeadline(undefined, 5000, 3000)).toEqual({ ms: 3000, applied: undefined });
  });
});
