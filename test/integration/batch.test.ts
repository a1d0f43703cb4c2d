// POST /v2/contacts/search/batch over real sockets: order, per-item status, spellings looked up once, size
// limits, and one deadline for the whole batch; upstream calls counted at the simulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitOf } from '../helpers/rate-limit-fields.js';
import { awayFromMinuteEnd, sleep } from '../helpers/guard-stack.js';
import { basicOf } from '../helpers/pbx.js';
import { startStack, type Stack } from '../helpers/stack.js';

interface Item {
  what: string;
  e164: string | null;
  status: number;
  cacheStatus?: string | null;
  body?: { results: { displayName: string }[] };
  problem?: { type: string; status: number; requestId: string };
}

describe('batch search', () => {
  let stack: Stack;
  let crm: string;
  const upstream = () => stack.simulator.controls.stats();

  beforeAll(async () => {
    stack = await startStack({
      env: { UPSTREAM_TIMEOUT_MS: '2000', BATCH_MAX_NUMBERS: '5', REQUEST_MAX_BODY_BYTES: '256' },
    });
    crm = await stack.login('crm');
  });
  afterAll(() => stack.close());
  afterEach(() => {
    stack.simulator.controls.setFaults({ latencyMs: 0, errorRate: 0 });
    stack.gateway.services.lookupCache.clear();
    stack.simulator.controls.resetStats();
  });

  function batch(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${stack.gateway.url}/v2/contacts/search/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${crm}`, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }
  const itemsOf = async (res: Response) => ((await res.json()) as { results: Item[] }).results;

  it('answers every number in request order with its own status, one upstream call per distinct number', async () => {
    const numbers = ['+44 20 7946 0002', 'anonymous', '020 7946 0999', '0044 20 7946 0002', '020 7946 0003'];
    const res = await batch({ numbers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const items = await itemsOf(res);
    expect(items.map((i) => i.what)).toEqual(numbers);
    expect(items.map((i) => i.e164)).toEqual([
      '+442079460002',
      null,
      '+442079460999',
      '+442079460002',
      '+442079460003',
    ]);
    expect(items.map((i) => i.status)).toEqual([200, 400, 200, 200, 200]);
    expect(items[0]!.body!.results[0]!.displayName).toBe('Müller Jonas');
    expect(items[3]!.body).toEqual(items[0]!.body);
    expect(items[1]!.problem!.type).toMatch(/\/docs\/problems#invalid-number$/);
    expect(items[1]!.problem!.requestId).toBe(res.headers.get('x-request-id'));
    expect(items[2]!.body!.results).toEqual([]);
    // Two spellings of +442079460002: one lookup, one upstream call.
    expect(upstream().searchByNumber).toEqual({ '+442079460002': 1, '+442079460999': 1, '+442079460003': 1 });
  });

  it('answers from the cache what a single search already fetched', async () => {
    await (await stack.search('+442079460004', crm)).text();
    const items = await itemsOf(await batch({ numbers: ['020 7946 0004'] }));
    expect(items[0]!.cacheStatus).toMatch(/^callerid-gateway; hit; ttl=/);
    expect(upstream().searchCalls).toBe(1);
  });

  it('gives an upstream failure to its items only', async () => {
    await (await stack.search('+442079460004', crm)).text();
    stack.simulator.controls.setFaults({ errorRate: 1 });
    const items = await itemsOf(await batch({ numbers: ['+442079460004', '+442079460005'] }));
    expect(items.map((i) => i.status)).toEqual([200, 502]);
    expect(items[1]!.problem!.type).toMatch(/\/docs\/problems#upstream-error$/);
    expect(items[1]!.cacheStatus).toBe('callerid-gateway; fwd=miss; detail=upstream-error');
  });

  it('answers what it has by the deadline, 504 for the rest, and the rest still fills the cache', async () => {
    await (await stack.search('+442079460004', crm)).text();
    stack.simulator.controls.resetStats();
    stack.simulator.controls.setFaults({ latencyMs: 800 });
    const started = performance.now();
    const res = await batch({ numbers: ['+442079460005', '+442079460004', '+442079460006'] }, { prefer: 'wait=0.3' });
    const items = await itemsOf(res);
    expect(performance.now() - started).toBeLessThan(750);
    expect(res.headers.get('preference-applied')).toBe('wait=0.3');
    expect(items.map((i) => i.status)).toEqual([504, 200, 504]);
    expect(items[0]!.problem!.type).toMatch(/\/docs\/problems#deadline-exceeded$/);

    await sleep(800);
    stack.simulator.controls.setFaults({ latencyMs: 0 });
    const later = await itemsOf(await batch({ numbers: ['+442079460005', '+442079460006'] }));
    expect(later.map((i) => i.cacheStatus?.replace(/; ttl=.*/, ''))).toEqual([
      'callerid-gateway; hit',
      'callerid-gateway; hit',
    ]);
    expect(upstream().searchByNumber).toEqual({ '+442079460005': 1, '+442079460006': 1 });
  });

  it('refuses more than BATCH_MAX_NUMBERS with 413 and calls nothing', async () => {
    const res = await batch({ numbers: ['1', '2', '3', '4', '5', '6'].map((n) => `020 7946 000${n}`) });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(upstream().searchCalls).toBe(0);
  });

  it('takes a full batch even where it is larger than REQUEST_MAX_BODY_BYTES, which bounds the other bodies', async () => {
    const spaced = '+44 (0)20   7946   0001'.padEnd(40, ' ');
    const body = JSON.stringify({ numbers: Array.from({ length: 5 }, () => spaced) }, null, 8);
    expect(body.length).toBeGreaterThan(256);
    const res = await batch(body);
    expect(res.status).toBe(200);
    expect((await itemsOf(res)).map((i) => i.e164)).toEqual(Array.from({ length: 5 }, () => '+442079460001'));
  });

  it('refuses a body over its byte bound with 413 before reading it all', async () => {
    const res = await batch({ numbers: ['+442079460001'], padding: 'x'.repeat(10_000) });
    expect(res.status).toBe(413);
  });

  it.each([
    ['not JSON', '{"numbers": ['],
    ['no numbers array', { what: '+442079460001' }],
    ['numbers not an array', { numbers: '+442079460001' }],
    ['an array body', ['+442079460001']],
    ['a non-string number', { numbers: ['+442079460001', 442079460002] }],
    ['a null number', { numbers: [null] }],
  ])('answers 400 for %s without an upstream call', async (_name, body) => {
    const res = await batch(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(upstream().searchCalls).toBe(0);
  });

  it('answers an empty batch with no results', async () => {
    expect(await itemsOf(await batch({ numbers: [] }))).toEqual([]);
  });

  it('takes HTTP Basic credentials and refuses none with 401', async () => {
    expect((await batch({ numbers: ['+442079460001'] }, { authorization: basicOf('crm') })).status).toBe(200);
    const refused = await fetch(`${stack.gateway.url}/v2/contacts/search/batch`, {
      method: 'POST',
      body: '{"numbers":[]}',
    });
    expect(refused.status).toBe(401);
  });
});

describe('batch and the client rate', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { CLIENT_RATE_PER_MINUTE: '3' } });
  });
  afterAll(() => stack.close());

  it('counts each distinct number as one search: items past the rate answer 429, then the whole batch is refused', async () => {
    await awayFromMinuteEnd();
    const token = await stack.login('crm');
    const post = (numbers: string[]) =>
      fetch(`${stack.gateway.url}/v2/contacts/search/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ numbers }),
      });
    const res = await post(['+442079460001', '020 7946 0001', '+442079460002', '+442079460003', '+442079460004']);
    const items = ((await res.json()) as { results: Item[] }).results;
    expect(items.map((i) => i.status)).toEqual([200, 200, 200, 200, 429]);
    expect(rateLimitOf(res)).toMatchObject({ policy: 'client', remaining: 0 });
    const refused = await post(['+442079460005']);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(stack.simulator.controls.stats().searchCalls).toBe(3);
  });
});
