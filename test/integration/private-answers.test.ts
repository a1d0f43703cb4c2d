// Answers that hold contact data are private and not stored by any cache; the console's answers say
// nothing about the gateway's cache, so they cannot tell who else looked a number up or who else lists it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

const ELSEWHERE = '020 7946 0003'; // listed by OpenBook only: nothing for the console's SwissDir
const NOWHERE = '020 7946 0999'; // listed by nobody
const LOOKED_UP = '020 7946 0002'; // SwissDir; an internal app looks it up first
const NEVER = '0113 496 0004'; // SwissDir? either way: never looked up before the console asks

/** Headers that differ between any two answers whatever they hold: the clock, the request id, the limiter's count. */
const VOLATILE = new Set(['date', 'x-request-id', 'ratelimit']);

function stableHeaders(res: Response): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => !VOLATILE.has(name)));
}

let address = 0;
async function consoleSearch(stack: Stack, what: string): Promise<Response> {
  address++;
  return fetch(`${stack.gateway.url}/console/v2/contacts/search?what=${encodeURIComponent(what)}`, {
    headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)', 'x-forwarded-for': `198.51.100.${address}` },
  });
}

describe('private answers', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({
      env: { CONSOLE_PROVIDER: 'swissdir', TRUST_PROXY_HOPS: '1', CONSOLE_RATE_PER_ADDRESS: '1000' },
    });
    token = await stack.login();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('marks API search answers private, no-store: from the upstream, from the app and from the Node door', async () => {
    const miss = await stack.search('020 7946 0001', token);
    expect(miss.headers.get('cache-status')).toMatch(/fwd=miss/);
    expect(miss.headers.get('cache-control')).toBe('private, no-store');
    const hit = await stack.search('020 7946 0001', token);
    expect(hit.headers.get('cache-status')).toMatch(/; hit;/);
    expect(hit.headers.get('cache-control')).toBe('private, no-store');
    const head = await stack.search('020 7946 0001', token, { method: 'HEAD' });
    expect(head.headers.get('cache-control')).toBe('private, no-store');
  });

  it('marks console search answers private, no-store', async () => {
    const res = await consoleSearch(stack, '020 7946 0001');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  });

  it('gives console answers no Cache-Status and no Age, on a miss and on a hit', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await consoleSearch(stack, '020 7946 0001');
      expect(res.headers.get('cache-status')).toBeNull();
      expect(res.headers.get('age')).toBeNull();
    }
  });

  it('answers "listed by another provider" and "listed by nobody" alike in the console, headers and body', async () => {
    for (let round = 0; round < 2; round++) {
      const elsewhere = await consoleSearch(stack, ELSEWHERE);
      const nowhere = await consoleSearch(stack, NOWHERE);
      expect(elsewhere.status).toBe(200);
      expect(nowhere.status).toBe(200);
      expect(stableHeaders(elsewhere)).toEqual(stableHeaders(nowhere));
      expect((await elsewhere.text()).replace('+442079460003', 'N')).toBe(
        (await nowhere.text()).replace('+442079460999', 'N'),
      );
    }
  });

  it('answers a number an internal app just looked up like one nobody looked up', async () => {
    await (await stack.search(LOOKED_UP, token)).text();
    await (await stack.search(LOOKED_UP, token)).text();
    const recent = await consoleSearch(stack, LOOKED_UP);
    const fresh = await consoleSearch(stack, NEVER);
    expect(stableHeaders(recent)).toEqual({
      ...stableHeaders(fresh),
      'content-length': recent.headers.get('content-length')!,
    });
  });
});
