// Identity providers' documents in the Cache API (`caches.default`) of real workerd: what one isolate stores another
// reads with its times; a copy is kept for its freshness only, under a URL naming no provider; a slow or garbled cache
// is a copy not found.
import { describe, expect, it } from 'vitest';
import { createCacheApiIdpDocuments } from '../../../../src/runtime/workers/workers-idp-documents.js';
import type { EdgeCache } from '../../../../src/runtime/workers/workers-lookup-tier.js';
import type { IdpDocumentCopy } from '../../../../src/shared-state/idp-documents.js';

const edge = (caches as unknown as { default: EdgeCache }).default;
const documents = (cache: EdgeCache = edge, timeoutMs = 1_000) =>
  createCacheApiIdpDocuments({ cache, host: 'callerid.test', clock: Date.now, timeoutMs });

/** The Cache API, with the URL and Cache-Control of every copy put. */
function recording() {
  const puts: { url: string; cacheControl: string | null }[] = [];
  const cache: EdgeCache = {
    match: (request) => edge.match(request),
    delete: (request) => edge.delete(request),
    put: async (request, response) => {
      puts.push({ url: request.url, cacheControl: response.headers.get('cache-control') });
      await edge.put(request, response);
    },
  };
  return { cache, puts };
}

const copy = (url: string, freshMs: number): IdpDocumentCopy => ({
  json: { keys: [{ kty: 'EC', kid: 'k1' }], issuer: url },
  cacheControl: 'max-age=600',
  fetchedAt: Date.now() - 5_000,
  freshUntil: Date.now() + freshMs,
});

describe('identity providers documents in the Cache API', () => {
  it('gives another isolate the copy one stored, under a URL naming no provider, for its freshness', async () => {
    const url = `https://idp.example.test/realms/${crypto.randomUUID()}/certs`;
    const stored = copy(url, 120_000);
    const { cache, puts } = recording();
    await documents(cache).put(url, stored);
    expect(await documents().get(url)).toEqual(stored);
    expect(puts).toHaveLength(1);
    expect(puts[0]!.url).toMatch(/^https:\/\/callerid\.test\/__callerid-gateway\/idp\/v1\/[0-9a-f]{64}$/);
    expect(puts[0]!.cacheControl).toBe('public, max-age=120');
  });

  it('keeps no copy past its freshness', async () => {
    const url = `https://idp.example.test/${crypto.randomUUID()}/certs`;
    const { cache, puts } = recording();
    await documents(cache).put(url, copy(url, -1));
    expect(puts).toEqual([]);
    expect(await documents().get(url)).toBeUndefined();
  });

  it('finds no copy where the cache is slow or holds something else', async () => {
    const url = `https://idp.example.test/${crypto.randomUUID()}/certs`;
    const { cache, puts } = recording();
    await documents(cache).put(url, copy(url, 60_000));
    await edge.put(new Request(puts[0]!.url), new Response('not json', { headers: { 'cache-control': 'max-age=60' } }));
    expect(await documents().get(url)).toBeUndefined();
    const hung: EdgeCache = {
      match: () => new Promise(() => {}),
      put: (request, response) => edge.put(request, response),
      delete: (request) => edge.delete(request),
    };
    const started = Date.now();
    expect(await documents(hung, 50).get(url)).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
