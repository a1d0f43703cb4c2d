// Cache-Status says what happened as RFC 9211 means it: `fwd=` only when the search went forward to the upstream;
// a refusal says why in `detail`; `Age` and `ttl` come from one rounding, so they add up to the entry's lifetime.
// Every value is read with a structured-field parser (RFC 8941), as a client library would.
import { parseList, Token } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { missNumber, sleep, stacksPerTest } from '../helpers/guard-stack.js';

const { start } = stacksPerTest();

/** The gateway's member of Cache-Status: its parameters by name (tokens as strings). */
function cacheStatus(res: Response): Record<string, unknown> {
  const header = res.headers.get('cache-status');
  expect(header).not.toBeNull();
  const [member] = parseList(header!);
  expect(String((member![0] as Token).toString())).toBe('callerid-gateway');
  return Object.fromEntries([...member![1].entries()].map(([k, v]) => [k, v instanceof Token ? v.toString() : v]));
}

describe('Cache-Status', () => {
  it('has no fwd on a 429 quota-exhausted, where no upstream call was made, and says why', async () => {
    const s = await start({ CLIENT_UPSTREAM_QUOTA_PER_DAY: '1' });
    const crm = await s.login('crm');
    expect(cacheStatus(await s.search(missNumber(1), crm))).toMatchObject({ fwd: 'miss', 'fwd-status': 200 });
    const calls = s.simulator.controls.stats().searchCalls;
    const refused = await s.search(missNumber(2), crm);
    expect(refused.status).toBe(429);
    const status = cacheStatus(refused);
    expect(status).not.toHaveProperty('fwd');
    expect(status).toMatchObject({ detail: 'quota-exhausted' });
    expect(s.simulator.controls.stats().searchCalls).toBe(calls);
  });

  it('keeps fwd=miss on an upstream failure, where the call was made', async () => {
    const s = await start({});
    const crm = await s.login('crm');
    s.simulator.controls.setFaults({ errorRate: 1 });
    const failed = await s.search(missNumber(3), crm);
    expect(failed.status).toBe(502);
    expect(cacheStatus(failed)).toMatchObject({ fwd: 'miss', detail: 'upstream-error' });
  });

  it('gives Age and ttl from one rounding: Age + ttl is the lifetime, stale or fresh', async () => {
    const s = await start({ CACHE_TTL_SECONDS: '2', CACHE_NEGATIVE_TTL_SECONDS: '2' });
    const crm = await s.login('crm');
    await s.search(missNumber(4), crm);
    await sleep(1_500);
    const fresh = await s.search(missNumber(4), crm);
    expect(Number(fresh.headers.get('age')) + Number(cacheStatus(fresh).ttl)).toBe(2);
    await sleep(2_000); // 3.5 s on: Age 3; stale by 1.5 s
    s.simulator.controls.setFaults({ errorRate: 1 });
    const stale = await s.search(missNumber(4), crm);
    expect(stale.status).toBe(200);
    expect(Number(stale.headers.get('age')) + Number(cacheStatus(stale).ttl)).toBe(2);
  });
});
