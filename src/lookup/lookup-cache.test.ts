// Unit tests of the lookup cache and service: a scripted upstream loader and a fake clock drive every window.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../base/errors.js';
import { bodyLengths, createLookupCache, UNNAMED_CALLER, type LookupCacheOptions } from './lookup-cache.js';
import { createLookupService } from './lookup-service.js';
import { cacheTelemetry, listed, scriptedUpstream, unlisted, WINDOWS } from '../../test/helpers/scripted-upstream.js';

const T0 = 1_700_000_000_000;
const NUMBER = '+442079460001';
const OTHER = '+442079460002';

function setup(overrides: Partial<LookupCacheOptions> = {}) {
  const time = { now: T0 };
  const upstream = scriptedUpstream();
  const { telemetry, results } = cacheTelemetry();
  const cache = createLookupCache({
    load: upstream.load,
    clock: () => time.now,
    ...WINDOWS,
    ...overrides,
  });
  const service = createLookupService({ cache, telemetry });
  return {
    cache,
    service,
    calls: upstream.calls,
    pending: upstream.pending,
    results,
    advance: (seconds: number) => void (time.now += seconds * 1000),
    setMode: upstream.setMode,
    setBody: upstream.setBody,
  };
}

/** Lets queued promise callbacks (a background refresh) run. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('lookup cache', () => {
  it('answers the second lookup from the cache with hit, the remaining ttl and Age', async () => {
    const t = setup();
    const first = await t.service.lookup(NUMBER, UNNAMED_CALLER);
    expect(first.cacheStatus).toBe('callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=600');
    expect(first.ageSeconds).toBe(0);
    t.advance(100);
    const second = await t.service.lookup(NUMBER, UNNAMED_CALLER);
    expect(second.body).toBe(first.body);
    expect(second.cacheStatus).toBe('callerid-gateway; hit; ttl=500');
    expect(second.ageSeconds).toBe(100);
    expect(t.calls).toEqual([NUMBER]);
    expect(t.results).toEqual(['miss', 'hit']);
  });

  it("takes the loader's word on whether a body lists anything instead of parsing it again", async () => {
    const time = { now: T0 };
    const body = '{"results":[{"displayName":"Zoë Hartley"}]}';
    const cache = createLookupCache({
      load: async () => ({ body, contentType: 'application/json', listed: false }),
      clock: () => time.now,
      ...WINDOWS,
    });
    const read = await cache.read(NUMBER);
    // The negative TTL: the loader said "no listing" although the body, parsed, would say otherwise.
    expect(read.answer.listed).toBe(false);
    expect(read.answer.ttlSeconds).toBe(WINDOWS.negativeTtlSeconds);
  });

  it('passes the body through byte for byte', async () => {
    const t = setup();
    const odd = `{ "results" : [ {"displayName":"Zoë  Hartley"} ],\n "total":1 }`;
    t.setBody(() => odd);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).body).toBe(odd);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).body).toBe(odd);
  });

  it('makes one upstream call for 200 concurrent misses of one number', async () => {
    const t = setup();
    t.setMode('defer');
    const lookups = Array.from({ length: 200 }, () => t.service.lookup(NUMBER, UNNAMED_CALLER));
    await settle();
    expect(t.calls).toHaveLength(1);
    t.pending[0]!.resolve({ body: listed(NUMBER), contentType: 'application/json' });
    const answers = await Promise.all(lookups);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers[0]!.cacheStatus).toBe('callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=600');
    expect(answers[199]!.cacheStatus).toBe('callerid-gateway; fwd=miss; fwd-status=200; stored; collapsed; ttl=600');
    expect(t.results.filter((r) => r === 'miss')).toHaveLength(1);
    expect(t.results.filter((r) => r === 'coalesced')).toHaveLength(199);
    expect(t.calls).toHaveLength(1);
  });

  it('fails every caller waiting on a failed load and keeps nothing', async () => {
    const t = setup();
    t.setMode('defer');
    const lookups = Array.from({ length: 5 }, () =>
      t.service.lookup(NUMBER, UNNAMED_CALLER).catch((err: unknown) => err),
    );
    await settle();
    t.pending[0]!.reject(new GatewayError('upstream_timeout', 'the upstream did not answer in time'));
    const errors = await Promise.all(lookups);
    for (const err of errors) {
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe('upstream_timeout');
      expect((err as GatewayError).headers['cache-status']).toBe('callerid-gateway; fwd=miss; detail=upstream-timeout');
    }
    expect(t.cache.entries).toBe(0);
  });

  it('keeps "no listing" answers for the shorter negative TTL', async () => {
    const t = setup();
    t.setBody((e164) => (e164 === NUMBER ? unlisted(e164) : listed(e164)));
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('ttl=60');
    expect((await t.service.lookup(OTHER, UNNAMED_CALLER)).cacheStatus).toContain('ttl=600');
    t.advance(61);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toMatch(
      /fwd=stale; ttl=-1; detail=stale-while-revalidate/,
    );
    expect((await t.service.lookup(OTHER, UNNAMED_CALLER)).cacheStatus).toBe('callerid-gateway; hit; ttl=539');
  });

  it('treats a body without a results array at the configured path as "no listing"', async () => {
    const t = setup({ resultsPath: 'data.items' });
    t.setBody(() => `{"data":{"items":[{"id":1}]}}`);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('ttl=600');
    t.setBody(() => `{"results":[{"id":1}]}`);
    expect((await t.service.lookup(OTHER, UNNAMED_CALLER)).cacheStatus).toContain('ttl=60');
  });

  it('never caches an upstream error', async () => {
    const t = setup();
    t.setMode('fail');
    await expect(t.service.lookup(NUMBER, UNNAMED_CALLER)).rejects.toMatchObject({ code: 'upstream_error' });
    await expect(t.service.lookup(NUMBER, UNNAMED_CALLER)).rejects.toMatchObject({ code: 'upstream_error' });
    expect(t.calls).toHaveLength(2);
    t.setMode('answer');
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('fwd=miss');
    expect(t.calls).toHaveLength(3);
  });

  it('answers a just-expired entry at once, marked stale, and refreshes it once in the background', async () => {
    const t = setup();
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    t.setBody((e164) => listed(e164, 'Hartley Zoë (moved)'));
    t.setMode('defer');
    t.advance(610);
    const stale = await Promise.all([
      t.service.lookup(NUMBER, UNNAMED_CALLER),
      t.service.lookup(NUMBER, UNNAMED_CALLER),
      t.service.lookup(NUMBER, UNNAMED_CALLER),
    ]);
    for (const answer of stale) {
      expect(answer.body).toContain('"Hartley Zoë"');
      expect(answer.cacheStatus).toBe('callerid-gateway; fwd=stale; ttl=-10; detail=stale-while-revalidate');
      expect(answer.ageSeconds).toBe(610);
    }
    expect(t.calls).toHaveLength(2);
    t.pending[0]!.resolve({ body: listed(NUMBER, 'Hartley Zoë (moved)'), contentType: 'application/json' });
    await settle();
    const fresh = await t.service.lookup(NUMBER, UNNAMED_CALLER);
    expect(fresh.body).toContain('(moved)');
    expect(fresh.cacheStatus).toBe('callerid-gateway; hit; ttl=600');
    expect(fresh.ageSeconds).toBe(0);
    expect(t.results).toEqual(['miss', 'stale', 'stale', 'stale', 'hit']);
  });

  it('hands a stale-while-revalidate refresh to the background hook, settling only when the refresh does', async () => {
    const handed: Promise<unknown>[] = [];
    const t = setup({ background: (work) => void handed.push(work) });
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    t.setMode('defer');
    t.advance(610);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('detail=stale-while-revalidate');
    expect(handed).toHaveLength(1);
    let settled = false;
    void handed[0]!.then(() => (settled = true));
    await settle();
    expect(settled).toBe(false);
    t.pending[0]!.resolve({ body: listed(NUMBER), contentType: 'application/json' });
    await settle();
    expect(settled).toBe(true);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toBe('callerid-gateway; hit; ttl=600');
  });

  it('keeps the stale entry when its background refresh fails', async () => {
    const t = setup();
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    t.setMode('fail');
    t.advance(605);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('detail=stale-while-revalidate');
    await settle();
    t.advance(1);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('detail=stale-while-revalidate');
    expect(t.cache.entries).toBe(1);
  });

  it('waits for the upstream once an entry is past the stale-while-revalidate window', async () => {
    const t = setup();
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    t.advance(600 + 31);
    const answer = await t.service.lookup(NUMBER, UNNAMED_CALLER);
    expect(answer.cacheStatus).toBe('callerid-gateway; fwd=stale; fwd-status=200; stored; ttl=600');
    expect(answer.ageSeconds).toBe(0);
    expect(t.calls).toHaveLength(2);
  });

  it('serves a stale entry marked stale-if-error when the upstream fails, up to CACHE_STALE_IF_ERROR_SECONDS', async () => {
    const t = setup();
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    t.setMode('fail');
    t.advance(600 + 1800);
    const answer = await t.service.lookup(NUMBER, UNNAMED_CALLER);
    expect(answer.body).toBe(listed(NUMBER));
    expect(answer.cacheStatus).toBe('callerid-gateway; fwd=stale; ttl=-1800; detail=stale-if-error');
    expect(answer.ageSeconds).toBe(2400);
    expect(t.results.at(-1)).toBe('stale_if_error');
    t.advance(1800);
    await expect(t.service.lookup(NUMBER, UNNAMED_CALLER)).rejects.toMatchObject({ code: 'upstream_error' });
    expect(t.calls).toHaveLength(3);
  });

  it('evicts the least recently used entries to stay within CACHE_MAX_BYTES', async () => {
    const t = setup({ maxBytes: 4096 });
    const numbers = Array.from({ length: 40 }, (_, i) => `+4420794600${String(i).padStart(2, '0')}`);
    for (const n of numbers) await t.service.lookup(n, UNNAMED_CALLER);
    expect(t.cache.bytes).toBeLessThanOrEqual(4096);
    expect(t.cache.entries).toBeLessThan(40);
    expect(t.cache.entries).toBeGreaterThan(0);
    t.calls.length = 0;
    await t.service.lookup(numbers[39]!, UNNAMED_CALLER);
    await t.service.lookup(numbers[0]!, UNNAMED_CALLER);
    expect(t.calls).toEqual([numbers[0]]);
  });

  it('hands an answer larger than the whole cache to its callers without keeping it', async () => {
    const t = setup({ maxBytes: 1024 });
    t.setBody((e164) => listed(e164, 'x'.repeat(2000)));
    const answer = await t.service.lookup(NUMBER, UNNAMED_CALLER);
    expect(answer.cacheStatus).toBe('callerid-gateway; fwd=miss; fwd-status=200; ttl=600');
    expect(t.cache.entries).toBe(0);
  });

  it('counts two bytes per character for bodies V8 stores two-byte', () => {
    const ascii = setup();
    const wide = setup();
    ascii.setBody(() => `{"results":[{"n":"${'a'.repeat(1000)}"}]}`);
    wide.setBody(() => `{"results":[{"n":"${'ł'.repeat(1000)}"}]}`);
    return Promise.all([
      ascii.service.lookup(NUMBER, UNNAMED_CALLER),
      wide.service.lookup(NUMBER, UNNAMED_CALLER),
    ]).then(() => {
      expect(wide.cache.bytes - ascii.cache.bytes).toBeGreaterThanOrEqual(1000);
    });
  });

  it('forgets one number on delete and everything on clear', async () => {
    const t = setup();
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    await t.service.lookup(OTHER, UNNAMED_CALLER);
    expect(t.cache.delete(NUMBER)).toBe(true);
    expect(t.cache.delete(NUMBER)).toBe(false);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('fwd=miss');
    expect((await t.service.lookup(OTHER, UNNAMED_CALLER)).cacheStatus).toContain('hit');
    expect(t.cache.clear()).toBe(2);
    expect(t.cache.entries).toBe(0);
    expect(t.cache.bytes).toBe(0);
    expect((await t.service.lookup(OTHER, UNNAMED_CALLER)).cacheStatus).toContain('fwd=miss');
  });

  it('answers the callers of a load that a purge interrupted, and does not keep its answer', async () => {
    const t = setup();
    t.setMode('defer');
    const lookup = t.service.lookup(NUMBER, UNNAMED_CALLER);
    await settle();
    t.cache.delete(NUMBER);
    t.pending[0]!.resolve({ body: listed(NUMBER), contentType: 'application/json' });
    expect((await lookup).body).toBe(listed(NUMBER));
    expect(t.cache.entries).toBe(0);
  });

  it('drives expiry from the injected clock only', async () => {
    const t = setup({ staleWhileRevalidateSeconds: 0, staleIfErrorSeconds: 0 });
    await t.service.lookup(NUMBER, UNNAMED_CALLER);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('hit');
    t.advance(600);
    expect((await t.service.lookup(NUMBER, UNNAMED_CALLER)).cacheStatus).toContain('fwd=miss');
    expect(t.calls).toHaveLength(2);
  });
});

describe('bodyLengths', () => {
  it.each([
    ['empty', ''],
    ['ASCII', '{"results":[]}'],
    ['Latin-1', 'Zoë Åström, Café'],
    ['beyond Latin-1', 'Siobhán Ó Briain – Łódź'],
    ['a surrogate pair', 'call 📞 now'],
    ['a lone high surrogate', 'a\ud83db'],
    ['a lone high surrogate at the end', 'ab\ud83d'],
    ['a lone low surrogate', 'a\udcdeb'],
    ['three-byte characters', '東京 ☎'],
  ])('counts %s as TextEncoder encodes it, and its memory as V8 stores it', (_what, body) => {
    const { utf8, memory } = bodyLengths(body);
    expect(utf8).toBe(new TextEncoder().encode(body).byteLength);
    expect(memory).toBe(/^[\0-\xff]*$/.test(body) ? body.length : body.length * 2);
  });
});
