// The caller's deadline over real sockets: Prefer: wait, else UPSTREAM_TIMEOUT_MS, against a slow simulator, the
// late answer filling the cache with the one upstream call (counted at the simulator), stale entries by the deadline.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../helpers/guard-stack.js';
import { startStack, type Stack } from '../helpers/stack.js';

const NUMBER = '+442079460001';
const OTHER_SPELLING = '020 7946 0001';

async function timed(request: Promise<Response>): Promise<{ res: Response; ms: number; body: string }> {
  const started = performance.now();
  const res = await request;
  const body = await res.text();
  return { res, ms: performance.now() - started, body };
}

describe('a deadline that is kept', () => {
  const time = { offset: 0 };
  let stack: Stack;
  let crm: string;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        UPSTREAM_TIMEOUT_MS: '2000',
        CACHE_TTL_SECONDS: '600',
        CACHE_STALE_WHILE_REVALIDATE_SECONDS: '0',
        CACHE_STALE_IF_ERROR_SECONDS: '3600',
      },
      gateway: { clock: () => Date.now() + time.offset },
    });
    crm = await stack.login('crm');
  });
  afterAll(() => stack.close());
  afterEach(() => {
    stack.simulator.controls.setFaults({ latencyMs: 0 });
    stack.gateway.services.lookupCache.clear();
    stack.simulator.controls.resetStats();
    time.offset = 0;
  });

  const wait = (seconds: string) => ({ headers: { prefer: `wait=${seconds}` } });

  it("answers 504 by the caller's wait, and the late answer fills the cache with the one upstream call", async () => {
    stack.simulator.controls.setFaults({ latencyMs: 900 });
    const first = await timed(stack.search(NUMBER, crm, wait('0.3')));
    expect(first.res.status).toBe(504);
    expect(first.ms).toBeGreaterThanOrEqual(280);
    expect(first.ms).toBeLessThan(800);
    expect(first.res.headers.get('content-type')).toBe('application/problem+json');
    expect(first.res.headers.get('preference-applied')).toBe('wait=0.3');
    expect(first.res.headers.get('cache-status')).toBe('callerid-gateway; fwd=miss; detail=deadline');
    expect(JSON.parse(first.body).type).toMatch(/\/docs\/problems#deadline-exceeded$/);

    // A second ring while the call is still running joins it (another spelling, the same number).
    const second = await timed(stack.search(OTHER_SPELLING, crm, wait('0.1')));
    expect(second.res.status).toBe(504);

    await sleep(900);
    const next = await timed(stack.search(NUMBER, crm, wait('0.3')));
    expect(next.res.status).toBe(200);
    expect(next.res.headers.get('cache-status')).toMatch(/^callerid-gateway; hit; ttl=/);
    expect(JSON.parse(next.body).results.length).toBeGreaterThan(0);
    expect(stack.simulator.controls.stats().searchByNumber).toEqual({ [NUMBER]: 1 });
  });

  it('answers within the wait with the answer when the upstream is quick enough', async () => {
    stack.simulator.controls.setFaults({ latencyMs: 100 });
    const { res, body } = await timed(stack.search(NUMBER, crm, wait('1.5')));
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=1.5');
    expect(res.headers.get('cache-status')).toMatch(/fwd=miss; fwd-status=200; stored/);
    expect(JSON.parse(body).results.length).toBeGreaterThan(0);
  });

  it('serves the stale entry it holds by the deadline, then the refreshed one', async () => {
    const original = await timed(stack.search(NUMBER, crm));
    expect(original.res.status).toBe(200);
    time.offset += 601_000;
    stack.simulator.controls.setFaults({ latencyMs: 900 });

    const stale = await timed(stack.search(NUMBER, crm, wait('0.3')));
    expect(stale.res.status).toBe(200);
    expect(stale.ms).toBeLessThan(800);
    expect(stale.res.headers.get('cache-status')).toMatch(/^callerid-gateway; fwd=stale; ttl=-[12]; detail=deadline$/);
    expect(stale.res.headers.get('age')).toMatch(/^60[12]$/);
    expect(stale.body).toBe(original.body);

    await sleep(900);
    const refreshed = await timed(stack.search(NUMBER, crm, wait('0.3')));
    expect(refreshed.res.headers.get('cache-status')).toMatch(/^callerid-gateway; hit; ttl=/);
    expect(refreshed.res.headers.get('age')).toBe('0');
    expect(stack.simulator.controls.stats().searchCalls).toBe(2);
  });

  it('ignores a malformed Prefer and waits as long as the lookup may take', async () => {
    stack.simulator.controls.setFaults({ latencyMs: 400 });
    const { res } = await timed(stack.search(NUMBER, crm, { headers: { prefer: 'wait=soon' } }));
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBeNull();
  });

  it('bounds a longer wait by UPSTREAM_TIMEOUT_MS and says what it applied', async () => {
    const { res } = await timed(stack.search(NUMBER, crm, wait('30')));
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('wait=2');
  });
});
