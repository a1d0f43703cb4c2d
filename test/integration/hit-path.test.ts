// The Node hit path answers a fresh cache hit exactly as the Hono app does: same status, body, headers,
// metrics and log line; anything it cannot vouch for goes through the app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchHitPath } from '../../src/routes/search-hit-path.js';
import { startStack, type Stack } from '../helpers/stack.js';

const NUMBER = '+442079460010';

function headerNames(res: Response): string[] {
  return [...res.headers.keys()].filter((k) => k !== 'date').sort();
}

async function hitTwice(stack: Stack, token: string, what: string) {
  await (await stack.search(what, token)).text();
  return stack.search(what, token, { headers: { 'x-request-id': 'parity-1' } });
}

async function metricValue(stack: Stack, line: RegExp): Promise<number> {
  const text = await (await fetch(`${stack.gateway.url}/metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.split(' ').at(-1));
}

describe('Node hit path', () => {
  let fast: Stack;
  let slow: Stack;
  let fastToken: string;
  let slowToken: string;

  beforeAll(async () => {
    fast = await startStack();
    slow = await startStack({ gateway: { hitPath: false } });
    fastToken = await fast.login();
    slowToken = await slow.login();
  });
  afterAll(async () => {
    await fast.close();
    await slow.close();
  });

  it('answers a hit with the same status, body and headers as the app', async () => {
    const a = await hitTwice(fast, fastToken, '020 7946 0010');
    const b = await hitTwice(slow, slowToken, '020 7946 0010');
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(await a.text()).toBe(await b.text());
    expect(headerNames(a)).toEqual(headerNames(b));
    for (const name of ['content-type', 'cache-status', 'age', 'x-request-id', 'content-length']) {
      expect(a.headers.get(name), name).toBe(b.headers.get(name));
    }
    expect(a.headers.get('cache-status')).toMatch(/; hit; ttl=/);
  });

  it('writes the same access log line and counts the same metrics', async () => {
    const before = fast.logs.length;
    const hitsBefore = await metricValue(fast, /^callerid_gateway_cache_lookups_total\{result="hit"\}/);
    const reqBefore = await metricValue(
      fast,
      /^callerid_gateway_http_requests_total\{route="\/v2\/contacts\/search",method="GET",status="200"\}/,
    );
    const res = await fast.search('020 7946 0010', fastToken);
    expect(res.headers.get('cache-status')).toMatch(/; hit;/);
    await res.text();
    await new Promise((r) => setTimeout(r, 20));
    const line = fast.logs
      .slice(before)
      .find((l) => l.fields.event === 'request' && l.fields.route === '/v2/contacts/search');
    expect(line).toMatchObject({
      level: 'info',
      fields: {
        method: 'GET',
        route: '/v2/contacts/search',
        status: 200,
        cache: 'hit',
        clientId: 'crm',
        numberHash: expect.stringMatching(/^[0-9a-f]{32}$/),
      },
    });
    expect(JSON.stringify(line)).not.toContain('79460010');
    expect(await metricValue(fast, /^callerid_gateway_cache_lookups_total\{result="hit"\}/)).toBe(hitsBefore + 1);
    expect(
      await metricValue(
        fast,
        /^callerid_gateway_http_requests_total\{route="\/v2\/contacts\/search",method="GET",status="200"\}/,
      ),
    ).toBe(reqBefore + 1);
  });

  it('answers only when token, spelling and a fresh entry are all known already', async () => {
    const hitPath = createSearchHitPath(fast.gateway.services);
    const target = `/v2/contacts/search?what=${encodeURIComponent('0161 496 0001')}`;
    const bearer = `Bearer ${fastToken}`;
    expect(hitPath('GET', target, bearer, undefined)).toBeUndefined();
    await (await fast.search('0161 496 0001', fastToken)).text();
    const hit = hitPath('GET', target, bearer, 'abc');
    expect(hit).toMatchObject({ requestId: 'abc', clientId: 'crm', lookup: { e164: '+441614960001', cache: 'hit' } });
    expect(hit?.headers['x-request-id']).toBe('abc');
    expect(hitPath('GET', target, bearer, 'bad id!')?.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(hitPath('HEAD', target, bearer, undefined)).toBeUndefined();
    expect(
      hitPath('GET', `/v2/contacts/search?what=${encodeURIComponent('+44 161 496 0001')}`, bearer, undefined),
    ).toBeUndefined();
    expect(hitPath('GET', `${target}&what=1`, bearer, undefined)).toBeUndefined();
    // The one `what` reader of the app and the hit path: an encoded name the app reads, the hit path reads alike;
    // an encoded repetition is the app's to refuse.
    expect(hitPath('GET', target.replace('what', 'wh%61t'), bearer, undefined)?.lookup.e164).toBe('+441614960001');
    expect(hitPath('GET', `${target}&WH%41T=1`, bearer, undefined)).toBeUndefined();
    expect(hitPath('GET', target, 'Bearer not-verified', undefined)).toBeUndefined();
    expect(hitPath('GET', `/console${target}`, bearer, undefined)).toBeUndefined();
  });

  it('leaves to the app what it cannot vouch for: a bad token, a repeated or malformed what, HEAD', async () => {
    await (await fast.search(NUMBER, fastToken)).text();
    const badToken = await fetch(`${fast.gateway.url}/v2/contacts/search?what=${encodeURIComponent(NUMBER)}`, {
      headers: { authorization: 'Bearer x.y.z' },
    });
    expect(badToken.status).toBe(401);
    expect(badToken.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const auth = { authorization: `Bearer ${fastToken}` };
    const repeated = await fetch(
      `${fast.gateway.url}/v2/contacts/search?what=${encodeURIComponent(NUMBER)}&what=${encodeURIComponent(NUMBER)}`,
      { headers: auth },
    );
    expect(repeated.status).toBe(400);
    const brokenEscape = await fetch(`${fast.gateway.url}/v2/contacts/search?what=%E0%A4%A`, { headers: auth });
    expect(brokenEscape.status).toBe(400);
    const head = await fetch(`${fast.gateway.url}/v2/contacts/search?what=${encodeURIComponent(NUMBER)}`, {
      method: 'HEAD',
      headers: auth,
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('cache-status')).toMatch(/; hit;/);
  });

  it("takes the app's path for a stale entry, which then refreshes it", async () => {
    await (await fast.search('0113 496 0004', fastToken)).text();
    fast.gateway.services.lookupCache.clear();
    fast.simulator.controls.resetStats();
    const res = await fast.search('0113 496 0004', fastToken);
    expect(res.headers.get('cache-status')).toMatch(/fwd=miss/);
    expect(fast.simulator.controls.stats().searchCalls).toBe(1);
  });
});
