// The Node hit path answers a fresh cache hit exactly as the Hono app does: same status, body, headers,
// metrics and log line; anything it cannot vouch for goes through the app. The Node search path answers the
// other searches of a verified token (misses, upstream failures) as the app does too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSearchHitPath, createSearchPath } from '../../src/routes/search-hit-path.js';
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
    // The same bytes: this number's answer is not ASCII (Café Zoë), and the hit path writes its encoded bytes.
    const [bytesA, bytesB] = [Buffer.from(await a.arrayBuffer()), Buffer.from(await b.arrayBuffer())];
    expect(bytesA.toString('utf8')).toContain('Café Zoë');
    expect(bytesA.equals(bytesB)).toBe(true);
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

  /** One search on each stack with the same request id; both answers, with their bodies read. */
  async function bothAnswer(what: string, init: RequestInit = {}) {
    const headers = { 'x-request-id': 'parity-2', ...(init.headers as Record<string, string> | undefined) };
    const a = await fast.search(what, fastToken, { ...init, headers });
    const b = await slow.search(what, slowToken, { ...init, headers });
    return { a, b, aBody: await a.text(), bBody: await b.text() };
  }

  function expectSameAnswer({ a, b, aBody, bBody }: Awaited<ReturnType<typeof bothAnswer>>, status: number) {
    expect(a.status).toBe(status);
    expect(b.status).toBe(status);
    expect(aBody).toBe(bBody);
    expect(headerNames(a)).toEqual(headerNames(b));
    // The stacks' histories differ (remaining requests in the client's window, entry ages): those values are compared by form.
    const form = (v: string | null) => v?.replace(/r=\d+;t=\d+/, 'r=N;t=N');
    for (const name of headerNames(b).filter((n) => n !== 'age'))
      expect(form(a.headers.get(name)), name).toBe(form(b.headers.get(name)));
  }

  it('answers a miss through the search path with the same status, body and headers as the app', async () => {
    const searchPath = createSearchPath(fast.gateway.services);
    const request = {
      method: 'GET',
      target: `/v2/contacts/search?what=${encodeURIComponent('0114 496 0005')}`,
      authorization: `Bearer ${fastToken}`,
      requestId: undefined,
      prefer: undefined,
      hasBody: false,
    };
    // What the search path leaves to the app: a Prefer header, a body, an unverified token, a bad number.
    expect(searchPath({ ...request, prefer: 'wait=1' })).toBeUndefined();
    expect(searchPath({ ...request, hasBody: true })).toBeUndefined();
    expect(searchPath({ ...request, authorization: 'Bearer x.y.z' })).toBeUndefined();
    expect(searchPath({ ...request, target: '/v2/contacts/search?what=12' })).toBeUndefined();
    expect(searchPath({ ...request, method: 'HEAD' })).toBeUndefined();

    const direct = await searchPath({ ...request, target: request.target.replace('0005', '0008'), requestId: 'r-1' });
    expect(direct).toMatchObject({ status: 200, requestId: 'r-1', lookup: { e164: '+441144960008', cache: 'miss' } });

    fast.simulator.controls.resetStats();
    const miss = await bothAnswer('0114 496 0005');
    expectSameAnswer(miss, 200);
    expect(miss.a.headers.get('cache-status')).toMatch(/fwd=miss/);
    expect(fast.simulator.controls.stats().searchCalls).toBe(1);
    const unlisted = await bothAnswer('0114 496 0999');
    expectSameAnswer(unlisted, 200);
  });

  it('answers an upstream failure as the app does, and logs and counts it alike', async () => {
    const counted = [
      /^callerid_gateway_http_requests_total\{route="\/v2\/contacts\/search",method="GET",status="502"\}/,
      /^callerid_gateway_client_searches_total\{client="crm",result="error"\}/,
    ];
    const countsOf = (stack: Stack) => Promise.all(counted.map((line) => metricValue(stack, line)));
    const countsBefore = [await countsOf(fast), await countsOf(slow)];
    for (const stack of [fast, slow]) stack.simulator.controls.setFaults({ errorRate: 1 });
    const linesBefore = [fast.logs.length, slow.logs.length];
    const failed = await bothAnswer('0115 496 0006');
    for (const stack of [fast, slow]) stack.simulator.controls.setFaults({ errorRate: 0 });
    expectSameAnswer(failed, 502);
    expect(failed.a.headers.get('content-type')).toBe('application/problem+json');
    await new Promise((r) => setTimeout(r, 20));
    const requestLine = (stack: Stack, from: number) => {
      const line = stack.logs.slice(from).find((l) => l.fields.event === 'request' && l.fields.status === 502);
      // Each stack hashes numbers with a key of its own: the hash is compared by form.
      const { durationMs: _, numberHash, ...fields } = line?.fields ?? {};
      return { level: line?.level, fields, numberHash: /^[0-9a-f]{32}$/.test(String(numberHash)) };
    };
    expect(requestLine(fast, linesBefore[0]!)).toEqual(requestLine(slow, linesBefore[1]!));
    expect(requestLine(fast, linesBefore[0]!).fields).toMatchObject({ status: 502, clientId: 'crm' });
    const failures = (stack: Stack, from: number) =>
      stack.logs
        .slice(from)
        .filter((l) => l.fields.event === 'request_failed')
        .map((l) => l.fields.code);
    expect(failures(fast, linesBefore[0]!)).toEqual(failures(slow, linesBefore[1]!));
    const added = async (stack: Stack, before: number[]) =>
      (await countsOf(stack)).map((value, i) => value - before[i]!);
    expect(await added(fast, countsBefore[0]!)).toEqual([1, 1]);
    expect(await added(slow, countsBefore[1]!)).toEqual([1, 1]);
  });

  it('leaves a search with Prefer to the app, which says what it applied', async () => {
    const prefer = await bothAnswer('0116 496 0007', { headers: { prefer: 'wait=2' } });
    expectSameAnswer(prefer, 200);
    expect(prefer.a.headers.get('preference-applied')).toMatch(/^wait=/);
  });
});
