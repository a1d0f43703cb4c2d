// What a search request asks: the one reader of `what` (read as Hono's query() does, every spelling of the name
// counted) and `Prefer: wait` (RFC 7240).
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { whatParam, lookupDeadline, preferredWaitSeconds } from './request-parts.js';

const hono = new Hono().get('/s', (c) => c.json({ what: c.req.query('what') ?? null }));
const honoReads = async (query: string) =>
  ((await (await hono.request(`http://x/s?${query}`)).json()) as { what: string | null }).what ?? undefined;

describe('whatParam', () => {
  it.each([
    'what=%2B44%20161%20496%200001',
    'what=%2B441614960001',
    'what=%2b441614960001',
    'what=%2B44161496000%31',
    'what=%2B',
    'what=%2B%2B44',
    'what=0161+496+0001',
    'what=%E0%A4%A',
    'what=',
    'what',
    'a=1&what=2&b=3',
    'wh%61t=42',
    '%77hat=7',
    'what=1%26x=2',
    'x=%zz&what=5',
    'WHAT=9',
    'whatever=1',
    '',
  ])('reads %j as Hono does', async (query) => {
    expect(whatParam(query).value).toBe(await honoReads(query));
  });

  it('counts every spelling of the name, and no other name', () => {
    expect(whatParam('what=1&what=2').count).toBe(2);
    expect(whatParam('what=1&WHAT=2').count).toBe(2);
    expect(whatParam('what=1&wh%61t=2').count).toBe(2);
    expect(whatParam('what=1&what').count).toBe(2);
    expect(whatParam('what=1&Wh%41T').count).toBe(2);
    expect(whatParam('what=1&whatever=2&wha=3&w%68a=4').count).toBe(1);
    expect(whatParam('what=1#&what=2').count).toBe(1);
  });
});

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
