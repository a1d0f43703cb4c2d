import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitOf } from '../helpers/rate-limit-fields.js';
import { consoleSearch, DESKTOP_HEADERS, rawRequest } from '../helpers/console-client.js';
import { PHONES, TABLETS } from '../helpers/user-agents.js';
import { startStack, type Stack } from '../helpers/stack.js';

interface SearchBody {
  total: number;
  results: { provider: { id: string } }[];
}

// +44 20 7946 0001 is listed by swissdir and openbook; 0003 only by openbook; 0010 by all three.
const BOTH = '020 7946 0001';
const OPENBOOK_ONLY = '020 7946 0003';
const ALL_THREE = '+44 20 7946 0010';

describe('console: page, provider filter, paths, devices', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '1000', CONSOLE_RATE_TOTAL: '10000' },
    });
  });
  afterAll(() => stack.close());

  it('serves the page with a strict CSP, a labelled input and no inline script or style', async () => {
    const res = await fetch(`${stack.gateway.url}/console`, { headers: DESKTOP_HEADERS });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<label for="what">');
    expect(html).toContain('id="what"');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['/console/app.js', '/console/app.css']) {
      expect((await fetch(`${stack.gateway.url}${asset}`)).status).toBe(200);
    }
  });

  it('returns only the console provider’s entries and adjusts the total', async () => {
    const res = await consoleSearch(stack.gateway.url, ALL_THREE);
    expect(res.status).toBe(200);
    const body = (await res.json()) as SearchBody;
    expect(body.results.map((r) => r.provider.id)).toEqual(['swissdir']);
    expect(body.total).toBe(1);
  });

  it('answers "no listing" for a number only another provider lists', async () => {
    const body = (await (await consoleSearch(stack.gateway.url, OPENBOOK_ONLY)).json()) as SearchBody;
    expect(body).toMatchObject({ total: 0, results: [] });
  });

  it('filters an answer served from the cache, and leaves the cached answer whole for the API', async () => {
    const token = await stack.login();
    const api1 = (await (await stack.search(BOTH, token)).json()) as SearchBody;
    expect(api1.results.map((r) => r.provider.id).sort()).toEqual(['openbook', 'swissdir']);

    const res = await consoleSearch(stack.gateway.url, '+442079460001');
    // Served from the cache (one upstream call below), though console answers do not say so.
    expect(res.headers.get('cache-status')).toBeNull();
    const console1 = (await res.json()) as SearchBody;
    expect(console1.results.map((r) => r.provider.id)).toEqual(['swissdir']);
    expect(console1.total).toBe(1);

    const api2 = (await (await stack.search(BOTH, token)).json()) as SearchBody;
    expect(api2.total).toBe(2);
    expect(stack.simulator.controls.stats().searchByNumber['+442079460001']).toBe(1);
  });

  it('does not widen the filter for a caller that also sends a valid token', async () => {
    const token = await stack.login();
    const res = await consoleSearch(stack.gateway.url, ALL_THREE, { authorization: `Bearer ${token}` });
    const body = (await res.json()) as SearchBody;
    expect(body.results.map((r) => r.provider.id)).toEqual(['swissdir']);
  });

  it('refuses an impossible number with 400 problem+json', async () => {
    const res = await consoleSearch(stack.gateway.url, 'call me maybe');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(rateLimitOf(res)).toMatchObject({ quota: 1000 });
  });

  it.each([
    '/console/',
    '/console/v2/contacts/search/',
    '/console/v2/contacts',
    '/console/v2',
    '/console/token/login',
    '/console/metrics',
    '/console/admin/cache',
    '/console/..%2fadmin',
    '/console/..%2F..%2Fmetrics',
    '/console/v2%2Fcontacts%2Fsearch?what=02079460001',
    '/console/%2e%2e/v2/contacts/search?what=02079460001',
    '/console/./v2/../../v2/contacts/search?what=02079460001',
    '/console/..%5cv2%5ccontacts%5csearch',
  ])('answers 404 for %s, whatever the encoding', async (target) => {
    const res = await rawRequest(stack.gateway.url, 'GET', target);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/problem+json');
  });

  it.each([
    ['POST', '/console'],
    ['PUT', '/console/v2/contacts/search?what=02079460001'],
    ['DELETE', '/console/v2/contacts/search'],
    ['PATCH', '/console/app.js'],
    ['OPTIONS', '/console'],
  ])('answers 405 with Allow for %s %s', async (method, target) => {
    const res = await rawRequest(stack.gateway.url, method, target);
    expect(res.status).toBe(405);
    expect(res.headers['allow']).toBe('GET, HEAD');
  });

  it('refuses phones: 403 problem+json from the API, a friendly page from /console', async () => {
    for (const userAgent of Object.values(PHONES)) {
      const api = await consoleSearch(stack.gateway.url, BOTH, { 'user-agent': userAgent, 'sec-ch-ua-mobile': '' });
      expect(api.status, userAgent).toBe(403);
      expect(api.headers.get('content-type')).toBe('application/problem+json');
      expect(((await api.json()) as { type: string }).type).toMatch(/device-not-supported$/);
    }
    const page = await fetch(`${stack.gateway.url}/console`, { headers: { 'user-agent': PHONES.iPhone } });
    expect(page.status).toBe(403);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('Available on tablets and larger devices');
  });

  it('refuses Sec-CH-UA-Mobile: ?1 whatever the User-Agent', async () => {
    const res = await consoleSearch(stack.gateway.url, BOTH, { 'sec-ch-ua-mobile': '?1' });
    expect(res.status).toBe(403);
  });

  it('serves tablets and desktops', async () => {
    for (const userAgent of Object.values(TABLETS)) {
      expect((await consoleSearch(stack.gateway.url, BOTH, { 'user-agent': userAgent })).status, userAgent).toBe(200);
      expect((await fetch(`${stack.gateway.url}/console`, { headers: { 'user-agent': userAgent } })).status).toBe(200);
    }
    expect((await consoleSearch(stack.gateway.url, BOTH)).status).toBe(200);
  });
});

describe('console: off without CONSOLE_PROVIDER', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('answers 404 for the page and the search', async () => {
    expect((await fetch(`${stack.gateway.url}/console`, { headers: DESKTOP_HEADERS })).status).toBe(404);
    const res = await consoleSearch(stack.gateway.url, BOTH);
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit')).toBeNull();
    expect(stack.simulator.controls.stats().searchCalls).toBe(0);
  });
});

describe('console: failures say nothing about the cache', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { CONSOLE_PROVIDER: 'swissdir', CONSOLE_RATE_PER_ADDRESS: '1000', CONSOLE_RATE_TOTAL: '10000' },
    });
  });
  afterAll(() => stack.close());

  const typeOf = async (res: Response) => ((await res.json()) as { type: string }).type;

  it('answers the 502 after an upstream error and the 503 of a cooldown without Cache-Status or Age', async () => {
    const token = await stack.login();
    stack.simulator.controls.setFaults({ errorRate: 1 });
    // The API says what the cache did with the failed lookup; the console must not.
    const api = await stack.search('+442079460002', token);
    expect(api.status).toBe(502);
    expect(api.headers.get('cache-status')).toMatch(/detail=upstream-error/);
    const failed = await consoleSearch(stack.gateway.url, '+442079460003');
    expect(failed.status).toBe(502);
    expect(await typeOf(failed)).toMatch(/upstream-error$/);
    expect(failed.headers.get('cache-status')).toBeNull();
    expect(failed.headers.get('age')).toBeNull();

    stack.simulator.controls.setFaults({ errorRate: 0, rateLimitRate: 1, rateLimitRetryAfter: '30' });
    const limited = await consoleSearch(stack.gateway.url, '+442079460004');
    expect(limited.status).toBe(503);
    expect(await typeOf(limited)).toMatch(/upstream-rate-limited$/);
    expect(limited.headers.get('cache-status')).toBeNull();
    const calls = stack.simulator.controls.stats().searchCalls;
    // During the cooldown nothing goes upstream: the gateway answers 503 itself.
    const apiCooling = await stack.search('+442079460005', token);
    expect(apiCooling.status).toBe(503);
    expect(apiCooling.headers.get('cache-status')).toMatch(/detail=upstream-rate-limited/);
    const cooling = await consoleSearch(stack.gateway.url, '+442079460006');
    expect(cooling.status).toBe(503);
    expect(cooling.headers.get('retry-after')).not.toBeNull();
    expect(cooling.headers.get('cache-status')).toBeNull();
    expect(cooling.headers.get('age')).toBeNull();
    expect(stack.simulator.controls.stats().searchCalls).toBe(calls);
    stack.simulator.controls.setFaults({ rateLimitRate: 0 });
  });
});
