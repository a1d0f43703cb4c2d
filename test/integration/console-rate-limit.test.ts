import { afterEach, describe, expect, it } from 'vitest';
import { rateLimitOf } from '../helpers/rate-limit-fields.js';
import { consoleSearch, DESKTOP_HEADERS } from '../helpers/console-client.js';
import { startStack, type Stack } from '../helpers/stack.js';

const NUMBER = '020 7946 0001';

describe('console rate limits (memory store)', () => {
  let stack: Stack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  const start = async (env: Record<string, string>) => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir', ...env } });
    return stack;
  };

  it('counts down RateLimit-Remaining, then answers 429 with Retry-After', async () => {
    const s = await start({ CONSOLE_RATE_PER_ADDRESS: '3', CONSOLE_RATE_WINDOW_SECONDS: '60' });
    for (const remaining of ['2', '1', '0']) {
      const res = await consoleSearch(s.gateway.url, NUMBER);
      expect(res.status).toBe(200);
      const fields = rateLimitOf(res);
      expect(fields).toMatchObject({ policy: 'console-address', quota: 3, window: 60, remaining: Number(remaining) });
      expect(fields?.policies).toEqual({ 'console-address': { q: 3, w: 60 }, 'console-total': { q: 300, w: 60 } });
      expect(fields?.reset).toBeGreaterThan(0);
    }
    const limited = await consoleSearch(s.gateway.url, NUMBER);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Retry-After is the `t` of the policy that refused.
    expect(rateLimitOf(limited)).toMatchObject({ policy: 'console-address', remaining: 0, reset: retryAfter });
    const problem = (await limited.json()) as { type: string; detail: string; requestId: string };
    expect(problem.type).toMatch(/too-many-requests$/);
    expect(problem.detail).toContain(`try again in ${retryAfter} s`);
    expect(problem.requestId).toBeTruthy();

    // The page still loads (it is not limited and asks no store, so it carries no RateLimit fields); the
    // authenticated API is not limited by the console.
    const page = await fetch(`${s.gateway.url}/console`, { headers: DESKTOP_HEADERS });
    expect(page.status).toBe(200);
    expect(page.headers.get('ratelimit')).toBeNull();
    const token = await s.login();
    for (let i = 0; i < 5; i++) expect((await s.search(NUMBER, token)).status).toBe(200);
  });

  it('ignores a spoofed X-Forwarded-For without trusted proxies', async () => {
    const s = await start({ CONSOLE_RATE_PER_ADDRESS: '2' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await consoleSearch(s.gateway.url, NUMBER, { 'x-forwarded-for': `203.0.113.${i + 1}` })).status);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it('honours X-Forwarded-For behind a trusted proxy, read from the right', async () => {
    const s = await start({ CONSOLE_RATE_PER_ADDRESS: '2', TRUST_PROXY_HOPS: '1' });
    // Two different clients behind the proxy each get their own limit.
    for (const client of ['198.51.100.1', '198.51.100.2']) {
      expect((await consoleSearch(s.gateway.url, NUMBER, { 'x-forwarded-for': client })).status).toBe(200);
      expect((await consoleSearch(s.gateway.url, NUMBER, { 'x-forwarded-for': client })).status).toBe(200);
    }
    // A client prepending made-up addresses is still the rightmost entry its proxy appended.
    const spoofed = await consoleSearch(s.gateway.url, NUMBER, { 'x-forwarded-for': '203.0.113.99, 198.51.100.1' });
    expect(spoofed.status).toBe(429);
  });

  it('enforces the total budget across addresses', async () => {
    const s = await start({ CONSOLE_RATE_PER_ADDRESS: '100', CONSOLE_RATE_TOTAL: '4', TRUST_PROXY_HOPS: '1' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await consoleSearch(s.gateway.url, NUMBER, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    const res = await consoleSearch(s.gateway.url, NUMBER, { 'x-forwarded-for': '198.51.100.200' });
    expect(rateLimitOf(res)).toMatchObject({ policy: 'console-total', quota: 4, remaining: 0 });
    expect(((await res.json()) as { detail: string }).detail).toMatch(/to the console/);
  });

  it('does not count phone refusals or other paths against the limit', async () => {
    const s = await start({ CONSOLE_RATE_PER_ADDRESS: '1' });
    await consoleSearch(s.gateway.url, NUMBER, { 'sec-ch-ua-mobile': '?1' });
    await fetch(`${s.gateway.url}/console/nothing-here`);
    await fetch(`${s.gateway.url}/console`, { headers: DESKTOP_HEADERS });
    expect((await consoleSearch(s.gateway.url, NUMBER)).status).toBe(200);
  });
});
