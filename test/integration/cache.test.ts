// The lookup cache over real sockets: gateway and simulator on loopback ports; the simulator counts upstream calls.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

const NUMBER = '+442079460001';
const SPELLINGS = ['+44 20 7946 0001', '020 7946 0001', '0044 20 7946 0001', '+44 (0)20 7946 0001', '(020) 7946-0001'];

describe('lookup cache over HTTP', () => {
  const time = { now: Date.now() };
  let stack: Stack;
  let crm: string;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        CACHE_TTL_SECONDS: '600',
        CACHE_NEGATIVE_TTL_SECONDS: '60',
        CACHE_STALE_WHILE_REVALIDATE_SECONDS: '30',
        CACHE_STALE_IF_ERROR_SECONDS: '3600',
      },
      gateway: { clock: () => time.now },
    });
    crm = await stack.login('crm');
  });
  afterAll(() => stack.close());
  afterEach(async () => {
    stack.simulator.controls.setFaults({ latencyMs: 0, errorRate: 0, revokeTokensAfterMs: null });
    stack.gateway.services.lookupCache.clear();
    stack.simulator.controls.resetStats();
  });

  const upstreamCalls = () => stack.simulator.controls.stats().searchCalls;

  it('makes one upstream call for five spellings of one number', async () => {
    const answers: Response[] = [];
    for (const spelling of SPELLINGS) answers.push(await stack.search(spelling, crm));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(answers[0]!.headers.get('cache-status')).toBe('callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=600');
    expect(answers[4]!.headers.get('cache-status')).toBe('callerid-gateway; hit; ttl=600');
    expect(answers[4]!.headers.get('age')).toBe('0');
    expect(stack.simulator.controls.stats().searchByNumber).toEqual({ [NUMBER]: 1 });
  });

  it('makes one upstream call for 200 concurrent misses of one number', async () => {
    stack.simulator.controls.setFaults({ latencyMs: 100 });
    const answers = await Promise.all(Array.from({ length: 200 }, () => stack.search('020 7946 0002', crm)));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const statuses = answers.map((r) => r.headers.get('cache-status'));
    expect(statuses.filter((s) => s?.includes('collapsed')).length).toBeGreaterThan(0);
    await Promise.all(answers.map((r) => r.text()));
    expect(upstreamCalls()).toBe(1);
  });

  it('carries Age and the remaining ttl on a hit', async () => {
    await (await stack.search(NUMBER, crm)).text();
    time.now += 42_000;
    const res = await stack.search(NUMBER, crm);
    expect(res.headers.get('cache-status')).toBe('callerid-gateway; hit; ttl=558');
    expect(res.headers.get('age')).toBe('42');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('does not cache upstream errors', async () => {
    stack.simulator.controls.setFaults({ errorRate: 1 });
    const first = await stack.search(NUMBER, crm);
    const second = await stack.search(NUMBER, crm);
    expect([first.status, second.status]).toEqual([502, 502]);
    expect(first.headers.get('content-type')).toBe('application/problem+json');
    expect(first.headers.get('cache-status')).toBe('callerid-gateway; fwd=miss; detail=upstream-error');
    expect(upstreamCalls()).toBe(2);
    stack.simulator.controls.setFaults({ errorRate: 0 });
    expect((await stack.search(NUMBER, crm)).status).toBe(200);
    expect(upstreamCalls()).toBe(3);
  });

  it('does not cache an upstream 401', async () => {
    stack.simulator.controls.setFaults({ revokeTokensAfterMs: 0 });
    expect((await stack.search(NUMBER, crm)).status).toBe(502);
    expect((await stack.search(NUMBER, crm)).status).toBe(502);
    stack.simulator.controls.setFaults({ revokeTokensAfterMs: null });
    const before = upstreamCalls();
    const res = await stack.search(NUMBER, crm);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-status')).toContain('fwd=miss');
    expect(upstreamCalls()).toBe(before + 1);
  });

  it('answers a just-expired entry marked stale and refreshes it once in the background', async () => {
    await (await stack.search(NUMBER, crm)).text();
    time.now += 610_000;
    const stale = await Promise.all([stack.search(NUMBER, crm), stack.search(NUMBER, crm)]);
    for (const res of stale) {
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-status')).toBe(
        'callerid-gateway; fwd=stale; ttl=-10; detail=stale-while-revalidate',
      );
      expect(res.headers.get('age')).toBe('610');
    }
    await expect.poll(upstreamCalls).toBe(2);
    const fresh = await stack.search(NUMBER, crm);
    expect(fresh.headers.get('cache-status')).toBe('callerid-gateway; hit; ttl=600');
    expect(upstreamCalls()).toBe(2);
  });

  it('serves the stale entry marked stale-if-error when the upstream fails', async () => {
    const body = await (await stack.search(NUMBER, crm)).text();
    time.now += 1_200_000;
    stack.simulator.controls.setFaults({ errorRate: 1 });
    const res = await stack.search(NUMBER, crm);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(body);
    expect(res.headers.get('cache-status')).toBe('callerid-gateway; fwd=stale; ttl=-600; detail=stale-if-error');
    expect(res.headers.get('age')).toBe('1200');
  });
});

describe('cache purge over HTTP', () => {
  let stack: Stack;
  let ops: string;
  let crm: string;

  beforeAll(async () => {
    stack = await startStack();
    [ops, crm] = await Promise.all([stack.login('ops'), stack.login('crm')]);
  });
  afterAll(() => stack.close());

  const purge = (path: string, token?: string) =>
    fetch(`${stack.gateway.url}${path}`, {
      method: 'DELETE',
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  const searchCalls = () => stack.simulator.controls.stats().searchCalls;

  it('purges one number by any spelling for an admin client', async () => {
    await (await stack.search('+442079460003', crm)).text();
    await (await stack.search('+442079460004', crm)).text();
    const res = await purge(`/admin/cache/${encodeURIComponent('020 7946 0003')}`, ops);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ number: '+442079460003', purged: 1, reach: 'process' });
    const before = searchCalls();
    expect((await stack.search('+442079460003', crm)).headers.get('cache-status')).toContain('fwd=miss');
    expect((await stack.search('+442079460004', crm)).headers.get('cache-status')).toContain('hit');
    expect(searchCalls()).toBe(before + 1);
  });

  it('purges everything for an admin client', async () => {
    await (await stack.search('+442079460005', crm)).text();
    const res = await purge('/admin/cache', ops);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { purged: number }).purged).toBeGreaterThan(0);
    expect(stack.gateway.services.lookupCache.entries).toBe(0);
  });

  it('refuses a purge without a token with 401', async () => {
    for (const path of ['/admin/cache', '/admin/cache/+442079460005']) {
      const res = await purge(path);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
  });

  it('refuses a purge by a client not in GATEWAY_ADMIN_CLIENTS with 403 problem+json', async () => {
    await (await stack.search('+442079460006', crm)).text();
    for (const path of ['/admin/cache', '/admin/cache/+442079460006']) {
      const res = await purge(path, crm);
      expect(res.status).toBe(403);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(((await res.json()) as { requestId: string }).requestId).toBeTruthy();
    }
    expect((await stack.search('+442079460006', crm)).headers.get('cache-status')).toContain('hit');
  });

  it('refuses a purge of something that is not a phone number with 400', async () => {
    expect((await purge('/admin/cache/not-a-number', ops)).status).toBe(400);
  });
});
