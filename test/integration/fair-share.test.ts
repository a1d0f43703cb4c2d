// A fair share of the upstream slots over real sockets, with a slow simulator: one client floods batches that
// fill every slot and the whole queue, and another client's single search is still answered within its deadline.
import { describe, expect, it } from 'vitest';
import { metricValue, missNumber, stacksPerTest } from '../helpers/guard-stack.js';

const { start } = stacksPerTest();

describe('fair share of the upstream slots (UPSTREAM_MAX_CONCURRENCY, UPSTREAM_MAX_QUEUE)', () => {
  it("answers another client's single search within its deadline while one client floods batches", async () => {
    const s = await start(
      {
        UPSTREAM_MAX_CONCURRENCY: '4',
        UPSTREAM_MAX_QUEUE: '16',
        UPSTREAM_TIMEOUT_MS: '3000',
        CLIENT_RATE_PER_MINUTE: '1000',
      },
      400,
    );
    const [crm, pbx] = [await s.login('crm'), await s.login('pbx')];
    // Three batches of 100 distinct numbers, answered at once (wait=0) while their lookups go on: every slot
    // and every queue place is the flooding client's.
    const batches = await Promise.all(
      [0, 1, 2].map((b) =>
        fetch(`${s.gateway.url}/v2/contacts/search/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${crm}`, 'content-type': 'application/json', prefer: 'wait=0' },
          body: JSON.stringify({ numbers: Array.from({ length: 100 }, (_, i) => missNumber(100 + b * 100 + i)) }),
        }).then(async (res) => (await res.arrayBuffer(), res.status)),
      ),
    );
    expect(batches).toEqual([200, 200, 200]);
    expect(await metricValue(s, 'callerid_gateway_upstream_in_flight')).toBe(4);
    expect(await metricValue(s, 'callerid_gateway_upstream_queued')).toBe(16);

    const started = performance.now();
    const single = await s.search(missNumber(900), pbx);
    const elapsed = performance.now() - started;
    expect(single.status).toBe(200);
    // One slot's wait (at most one slow call) and its own call: well inside UPSTREAM_TIMEOUT_MS.
    expect(elapsed).toBeLessThan(3000);
    expect(single.headers.get('cache-status')).toMatch(/fwd=miss/);
  }, 30_000);
});
