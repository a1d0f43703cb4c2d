// The Cache API lookup tier on `caches.default` in real workerd: what one isolate stores another reads with the
// original timestamps; entries end with their stale windows; a purge by key deletes in this data centre.
import { describe, expect, it } from 'vitest';
import { createCacheApiTier, type EdgeCache } from '../../../../src/runtime/workers/workers-lookup-tier.js';
import { TIER_ENTRY_VERSION, type TierEntry } from '../../../../src/shared-state/lookup-tier.js';

const edge = (caches as unknown as { default: EdgeCache }).default;
const tier = () => createCacheApiTier({ cache: edge, host: 'callerid.test', clock: Date.now });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function entry(storedAt: number, freshMs: number, staleMs: number): TierEntry {
  return {
    v: TIER_ENTRY_VERSION,
    body: '{"total":1,"results":[{"provider":{"id":"swissdir"}}]}',
    contentType: 'application/json',
    storedAt,
    ttlSeconds: freshMs / 1000,
    freshUntil: storedAt + freshMs,
    revalidateUntil: storedAt + freshMs + staleMs,
    staleIfErrorUntil: storedAt + freshMs + staleMs,
    listed: true,
  };
}

describe('Cache API lookup tier', () => {
  it('gives another isolate the entry one stored, with its original timestamps', async () => {
    const stored = entry(Date.now() - 5_000, 60_000, 60_000);
    await tier().set('k-shared', stored);
    expect(await tier().get('k-shared')).toEqual(stored);
  });

  it('forgets an entry once the later of its stale windows has ended', async () => {
    await tier().set('k-short', entry(Date.now(), 200, 800));
    expect(await tier().get('k-short')).toBeDefined();
    await sleep(1_300);
    expect(await tier().get('k-short')).toBeUndefined();
  });

  it('does not store an entry whose stale windows are already over', async () => {
    await tier().set('k-over', entry(Date.now() - 10_000, 1_000, 1_000));
    expect(await tier().get('k-over')).toBeUndefined();
  });

  it('ignores an entry of another version', async () => {
    await edge.put(
      new Request(`https://callerid.test/__callerid-gateway/lookup/v${TIER_ENTRY_VERSION}/k-old`),
      new Response(JSON.stringify({ ...entry(Date.now(), 60_000, 0), v: 99 }), {
        headers: { 'cache-control': 'max-age=60' },
      }),
    );
    expect(await tier().get('k-old')).toBeUndefined();
  });

  it('deletes a key in this data centre, says its purges reach this data centre only, and leases always', async () => {
    const t = tier();
    await t.set('k-purge', entry(Date.now(), 60_000, 0));
    await tier().delete('k-purge');
    expect(await t.get('k-purge')).toBeUndefined();
    expect(t.purgeReach).toBe('data-centre');
    expect(await t.lease('k-purge', 1_000)).toBe(true);
    expect(await tier().lease('k-purge', 1_000)).toBe(true);
  });
});
