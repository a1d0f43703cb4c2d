// The second lookup tier on Workers: Cloudflare's Cache API (`caches.default`), shared by every isolate of one data
// centre. Entries carry their absolute times, so `Age` and `Cache-Status` stay true whichever isolate stored them.
import {
  TIER_ENTRY_VERSION,
  type LookupTier,
  type PurgeListener,
  type TierEntry,
} from '../../shared-state/lookup-tier.js';
import type { Clock } from '../../base/clock.js';
import { StoreUnavailableError } from '../../shared-state/store-unavailable.js';

/** The part of the Cache API used here (`caches.default` on Workers). */
export interface EdgeCache {
  match(request: Request): Promise<Response | undefined>;
  put(request: Request, response: Response): Promise<void>;
  delete(request: Request): Promise<boolean>;
}

export interface CacheApiTierOptions {
  cache: EdgeCache;
  /**
   * Host of the synthetic URLs entries are stored under: one the deployment controls (its custom domain), so no
   * other site's cache key can collide and no request from outside is ever answered from these entries.
   */
  host: string;
  clock: Clock;
}

/** Cache-Tag of every entry, for Cloudflare's zone purge by tag (the only purge of everything that reaches them). */
const LOOKUP_CACHE_TAG = 'callerid-gateway-lookup';

/** Path of every entry; the version lets two releases side by side ignore each other's entries. */
const PATH = `/__callerid-gateway/lookup/v${TIER_ENTRY_VERSION}/`;

function isEntry(value: unknown): value is TierEntry {
  if (typeof value !== 'object' || value === null) return false;
  const e = value as Record<string, unknown>;
  return (
    e['v'] === TIER_ENTRY_VERSION &&
    typeof e['body'] === 'string' &&
    typeof e['contentType'] === 'string' &&
    ['storedAt', 'ttlSeconds', 'freshUntil', 'revalidateUntil', 'staleIfErrorUntil'].every(
      (k) => typeof e[k] === 'number',
    ) &&
    typeof e['listed'] === 'boolean'
  );
}

export function createCacheApiTier(options: CacheApiTierOptions): LookupTier {
  const { cache, clock } = options;
  // The keys are keyed hashes already (the port's contract); they are URL-encoded, never the number.
  const requestFor = (key: string): Request => new Request(`https://${options.host}${PATH}${encodeURIComponent(key)}`);

  async function guarded<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw new StoreUnavailableError('lookup', 'cache API failed', { cause: err });
    }
  }

  return {
    kind: 'cache-api',
    // The Cache API reaches this data centre only; other locations keep their copies until they expire.
    purgeReach: 'data-centre',
    get: (key) =>
      guarded(async () => {
        const res = await cache.match(requestFor(key));
        if (res === undefined) return undefined;
        let value: unknown;
        try {
          value = await res.json();
        } catch {
          return undefined;
        }
        return isEntry(value) ? value : undefined;
      }),
    set: (key, entry) =>
      guarded(async () => {
        // Kept by the Cache API until the later of its two stale windows ends; nothing to keep when both are over.
        const keepSeconds = Math.ceil((Math.max(entry.revalidateUntil, entry.staleIfErrorUntil) - clock()) / 1000);
        if (keepSeconds <= 0) return;
        const body = JSON.stringify(entry);
        await cache.put(
          requestFor(key),
          new Response(body, {
            // The tag lets an operator purge every lookup in every data centre through Cloudflare's purge by tag.
            headers: {
              'content-type': 'application/json',
              'cache-control': `public, max-age=${keepSeconds}`,
              'cache-tag': LOOKUP_CACHE_TAG,
            },
          }),
        );
      }),
    delete: (key) =>
      guarded(async () => {
        await cache.delete(requestFor(key));
      }),
    // The Cache API cannot list its entries, so a purge of everything cannot reach them: they end with their
    // own max-age. Purging one number works (its key is known); see the README.
    clear: async () => {},
    // Nothing to lease against: concurrent fills in one data centre may each call the upstream (per isolate,
    // each isolate's own cache still collapses its callers to one call).
    lease: async () => true,
    release: async () => {},
    // Purges cannot be announced to other data centres or isolates: each isolate's memory keeps its copy until
    // its own freshness ends.
    onPurge: (_listener: PurgeListener) => {},
  };
}
