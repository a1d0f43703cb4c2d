// Identity providers' documents shared by every isolate of one data centre through the Cache API (`caches.default`):
// an isolate that fetched a discovery document or a JWK set stores it here until its freshness ends, and the others
// take it instead of asking the provider. A Cache API that fails or is slow is a copy not found: the isolate fetches.
import type { IdpDocumentCopy, IdpDocumentStore } from '../../shared-state/idp-documents.js';
import type { Clock } from '../../base/clock.js';
import { sha256Hex } from '../../auth/client-registry.js';
import type { EdgeCache } from './workers-lookup-tier.js';

export interface CacheApiIdpDocumentsOptions {
  cache: EdgeCache;
  /** Host of the synthetic URLs copies are stored under (LOOKUP_CACHE_HOST, as the lookups'). */
  host: string;
  clock: Clock;
  /** How long a read waits for the Cache API before the isolate fetches on its own (DURABLE_OBJECT_TIMEOUT_MS). */
  timeoutMs: number;
}

/** Cache-Tag of every copy, for Cloudflare's purge by tag. */
const IDP_CACHE_TAG = 'callerid-gateway-idp';
/** The copies' form; another release's copies are not read. */
const COPY_VERSION = 1;
const PATH = `/__callerid-gateway/idp/v${COPY_VERSION}/`;

function copyOf(value: unknown): IdpDocumentCopy | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { v, json, cacheControl, fetchedAt, freshUntil } = value as Record<string, unknown>;
  const isObject = typeof json === 'object' && json !== null && !Array.isArray(json);
  if (v !== COPY_VERSION || !isObject || typeof fetchedAt !== 'number' || typeof freshUntil !== 'number')
    return undefined;
  if (cacheControl !== null && typeof cacheControl !== 'string') return undefined;
  return { json: json as Record<string, unknown>, cacheControl, fetchedAt, freshUntil };
}

/** `work`'s value, or undefined when it fails or takes longer than `ms`. */
async function within<T>(ms: number, work: () => Promise<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function createCacheApiIdpDocuments(options: CacheApiIdpDocumentsOptions): IdpDocumentStore {
  const { cache, clock } = options;
  // The provider's URL is hashed: a key of fixed length whatever the URL's.
  const requestFor = async (url: string) => new Request(`https://${options.host}${PATH}${await sha256Hex(url)}`);
  return {
    get: (url) =>
      within(options.timeoutMs, async () => {
        const res = await cache.match(await requestFor(url));
        return res === undefined ? undefined : copyOf(await res.json());
      }),
    async put(url, copy) {
      const keepSeconds = Math.ceil((copy.freshUntil - clock()) / 1000);
      if (keepSeconds <= 0) return;
      const body = JSON.stringify({ v: COPY_VERSION, ...copy });
      const headers = {
        'content-type': 'application/json',
        'cache-control': `public, max-age=${keepSeconds}`,
        'cache-tag': IDP_CACHE_TAG,
      };
      await cache.put(await requestFor(url), new Response(body, { headers }));
    },
  };
}
