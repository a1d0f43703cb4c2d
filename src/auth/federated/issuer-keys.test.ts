// The keys of one issuer: found by discovery (whose issuer must be the configured one), kept by Cache-Control within
// bounds, fetched again on an unknown key id at most once per 30 s whatever callers send, held while the issuer is
// down for a bound, a removed key refused once a fetch says so, a set of too many keys refused whole.
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { noopTelemetry, type KeySetFetchOutcome } from '../../observability/telemetry.js';
import {
  createIssuerKeys,
  discoveryUrls,
  KEY_SET_HOLD_MS,
  KEY_SET_MAX_KEYS,
  KEY_SET_REFETCH_MS,
} from './issuer-keys.js';
import {
  freshnessOf,
  KEY_SET_FRESH_DEFAULT_MS,
  KEY_SET_FRESH_MAX_MS,
  KEY_SET_FRESH_MIN_MS,
  type IdpDocumentDeps,
} from './idp-document-source.js';
import type { TrustedIssuer } from './trusted-issuers.js';
import type { IdpDocumentCopy, IdpDocumentStore } from '../../shared-state/idp-documents.js';

const ISSUER = 'https://idp.example.test/realms/apps';
const trusted: TrustedIssuer = {
  issuer: ISSUER,
  audiences: ['gateway'],
  jwksUri: undefined,
  clientClaims: ['client_id'],
  algorithms: ['ES256'],
  index: 0,
};
const silent = { debug() {}, info() {}, warn() {}, error() {} };

const publicKey = async (kid: string): Promise<JWK> => ({
  ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)),
  kid,
  alg: 'ES256',
});

/** An issuer answering discovery and its key set from `state`, counting what it is asked. */
function issuerAt(state: { keys: JWK[]; up: boolean; cacheControl?: string; metadataIssuer?: string }) {
  const asked: string[] = [];
  const outcomes: KeySetFetchOutcome[] = [];
  const fetchFn = (async (input: string | URL | Request) => {
    const url = String(input);
    asked.push(url);
    if (!state.up) throw new TypeError('fetch failed');
    if (url === `${ISSUER}/.well-known/openid-configuration`)
      return Response.json({ issuer: state.metadataIssuer ?? ISSUER, jwks_uri: `${ISSUER}/certs` });
    if (url === `${ISSUER}/certs`)
      return Response.json({ keys: state.keys }, { headers: { 'cache-control': state.cacheControl ?? '' } });
    return new Response('', { status: 404 });
  }) as typeof fetch;
  return { asked, outcomes, fetchFn };
}

function keysOf(idp: ReturnType<typeof issuerAt>, clock: () => number, more: Partial<IdpDocumentDeps> = {}) {
  return createIssuerKeys(trusted, {
    fetch: idp.fetchFn,
    logger: silent,
    telemetry: { ...noopTelemetry, keySetFetch: (_i, _d, outcome) => void idp.outcomes.push(outcome) },
    allowHttp: false,
    clock,
    ...more,
  });
}

/** The copies the processes of one place share (the Cache API of a data centre on Workers), failing on demand. */
function sharedCopies() {
  const copies = new Map<string, IdpDocumentCopy>();
  const state = { failing: false };
  const store: IdpDocumentStore = {
    get: async (url) => {
      if (state.failing) throw new Error('store down');
      return copies.get(url);
    },
    put: async (url, copy) => {
      if (state.failing) throw new Error('store down');
      copies.set(url, structuredClone(copy));
    },
  };
  return { copies, store, state };
}

const certsAsked = (idp: ReturnType<typeof issuerAt>) => idp.asked.filter((u) => u.endsWith('/certs')).length;

describe('the keys of a trusted issuer', () => {
  it('keeps a set for its Cache-Control max-age within bounds', () => {
    expect(freshnessOf('public, max-age=10')).toBe(KEY_SET_FRESH_MIN_MS);
    expect(freshnessOf('max-age=600')).toBe(600_000);
    expect(freshnessOf('max-age=864000')).toBe(KEY_SET_FRESH_MAX_MS);
    expect(freshnessOf(null)).toBe(KEY_SET_FRESH_DEFAULT_MS);
    expect(freshnessOf('no-store')).toBe(KEY_SET_FRESH_MIN_MS);
  });

  it('finds the metadata where OpenID Connect and RFC 8414 put it', () => {
    expect(discoveryUrls(ISSUER)).toEqual([
      'https://idp.example.test/realms/apps/.well-known/openid-configuration',
      'https://idp.example.test/.well-known/oauth-authorization-server/realms/apps',
    ]);
  });

  it('fetches again on unknown key ids at most once per 30 s, and takes an added key after it', async () => {
    let now = 1_000_000;
    const state = { keys: [await publicKey('k1')], up: true };
    const idp = issuerAt(state);
    const keys = keysOf(idp, () => now);
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    state.keys = [...state.keys, await publicKey('k2')];
    const found = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => keys.keyFor({ alg: 'ES256', kid: i === 0 ? 'k2' : `random-${i}` })),
    );
    expect(found.filter((k) => k !== undefined)).toEqual([]);
    expect(idp.asked.filter((u) => u.endsWith('/certs'))).toHaveLength(1);
    now += KEY_SET_REFETCH_MS;
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k2' })).toBeDefined();
    expect(idp.asked.filter((u) => u.endsWith('/certs'))).toHaveLength(2);
    // Discovery once: its answer is kept.
    expect(idp.asked.filter((u) => u.endsWith('/openid-configuration'))).toHaveLength(1);
  });

  it('refuses a key removed at the issuer once a fetch says so', async () => {
    let now = 0;
    const state = { keys: [await publicKey('k1'), await publicKey('k2')], up: true, cacheControl: 'max-age=60' };
    const keys = keysOf(issuerAt(state), () => now);
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    state.keys = [state.keys[1]!];
    now += 60_000;
    // Past its freshness, a held key still verifies while the set is fetched again behind the answer...
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // ...and once it has been, the removed key is refused.
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeUndefined();
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k2' })).toBeDefined();
  });

  it('keeps verifying with the held keys while the issuer is down, for KEY_SET_HOLD_MS', async () => {
    let now = 0;
    const state = { keys: [await publicKey('k1')], up: true };
    const idp = issuerAt(state);
    const keys = keysOf(idp, () => now);
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    state.up = false;
    now += KEY_SET_REFETCH_MS;
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k9' })).toBeUndefined();
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    now = KEY_SET_HOLD_MS - 1;
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    now = KEY_SET_HOLD_MS;
    expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeUndefined();
    expect(idp.outcomes).toContain('network');
  });

  it('refuses discovery naming another issuer, and a set of too many keys', async () => {
    const liar = issuerAt({ keys: [await publicKey('k1')], up: true, metadataIssuer: 'https://other.example' });
    expect(await keysOf(liar, () => 0).keyFor({ alg: 'ES256', kid: 'k1' })).toBeUndefined();
    expect(liar.outcomes).toEqual(['wrong_issuer']);
    expect(liar.asked.filter((u) => u.endsWith('/certs'))).toEqual([]);
    const many = await Promise.all(Array.from({ length: KEY_SET_MAX_KEYS + 1 }, (_, i) => publicKey(`k${i}`)));
    const crowded = issuerAt({ keys: many, up: true });
    expect(await keysOf(crowded, () => 0).keyFor({ alg: 'ES256', kid: 'k1' })).toBeUndefined();
    expect(crowded.outcomes).toEqual(['ok', 'too_many_keys']);
  });
});

describe('the keys of a trusted issuer shared by the processes of one place', () => {
  it('takes the documents another process fetched: one discovery and one set for both', async () => {
    const idp = issuerAt({ keys: [await publicKey('k1')], up: true });
    const { store } = sharedCopies();
    for (const keys of [keysOf(idp, () => 0, { shared: store }), keysOf(idp, () => 0, { shared: store })])
      expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    expect(idp.asked).toEqual([`${ISSUER}/.well-known/openid-configuration`, `${ISSUER}/certs`]);
    expect(idp.outcomes).toEqual(['ok', 'ok']);
  });

  it('fetches a set past its freshness once for both, the second taking the copy of the first', async () => {
    let now = 0;
    const state = { keys: [await publicKey('k1'), await publicKey('k2')], up: true, cacheControl: 'max-age=60' };
    const idp = issuerAt(state);
    const { store } = sharedCopies();
    const [first, second] = [keysOf(idp, () => now, { shared: store }), keysOf(idp, () => now, { shared: store })];
    for (const keys of [first, second]) expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    state.keys = [state.keys[1]!];
    now += 60_000;
    for (const keys of [first, second]) {
      expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(certsAsked(idp)).toBe(2);
    // Both hold the set fetched again, which no longer lists the removed key.
    for (const keys of [first, second]) expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeUndefined();
  });

  it('for a key id not held, takes a copy listing it or fetched within 30 s, else asks the provider', async () => {
    let now = 0;
    const state = { keys: [await publicKey('k1')], up: true };
    const idp = issuerAt(state);
    const { store } = sharedCopies();
    const [first, second] = [keysOf(idp, () => now, { shared: store }), keysOf(idp, () => now, { shared: store })];
    for (const keys of [first, second]) expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    state.keys = [...state.keys, await publicKey('k2')];
    now = KEY_SET_REFETCH_MS;
    // The first asks the provider (the copy is its own, 30 s old); the second takes the copy it shared.
    for (const keys of [first, second]) expect(await keys.keyFor({ alg: 'ES256', kid: 'k2' })).toBeDefined();
    expect(certsAsked(idp)).toBe(2);
    // A third process meets a key id the copy lacks: the copy, 15 s old, stands for a fetch...
    state.keys = [...state.keys, await publicKey('k3')];
    now = KEY_SET_REFETCH_MS + 15_000;
    const third = keysOf(idp, () => now, { shared: store });
    expect(await third.keyFor({ alg: 'ES256', kid: 'k3' })).toBeUndefined();
    expect(certsAsked(idp)).toBe(2);
    // ...until it is 30 s old and this process may fetch again: the key is taken 30 s after the copy was fetched.
    now = 2 * KEY_SET_REFETCH_MS + 15_000;
    expect(await third.keyFor({ alg: 'ES256', kid: 'k3' })).toBeDefined();
    expect(certsAsked(idp)).toBe(3);
    // The first, holding an older set, meets a key id the newer copy lacks once that copy is 30 s old: it asks.
    state.keys = [...state.keys, await publicKey('k4')];
    now = 3 * KEY_SET_REFETCH_MS + 16_000;
    expect(await first.keyFor({ alg: 'ES256', kid: 'k4' })).toBeDefined();
    expect(certsAsked(idp)).toBe(4);
  });

  it('does not take a copy past its freshness, nor one it refuses', async () => {
    let now = 0;
    const idp = issuerAt({ keys: [await publicKey('k1')], up: true });
    const { store, copies } = sharedCopies();
    expect(await keysOf(idp, () => now, { shared: store }).keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    now = KEY_SET_FRESH_DEFAULT_MS;
    expect(await keysOf(idp, () => now, { shared: store }).keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    expect(certsAsked(idp)).toBe(2);
    const many = await Promise.all(Array.from({ length: KEY_SET_MAX_KEYS + 1 }, (_, i) => publicKey(`k${i}`)));
    copies.set(`${ISSUER}/certs`, {
      json: { keys: many },
      cacheControl: null,
      fetchedAt: now,
      freshUntil: now + 60_000,
    });
    expect(await keysOf(idp, () => now, { shared: store }).keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    expect(certsAsked(idp)).toBe(3);
    expect(idp.outcomes).not.toContain('too_many_keys');
    // A copy that claims to be fresh for longer than any fetch makes one is fresh for KEY_SET_FRESH_MAX_MS at most.
    const old = { keys: [await publicKey('k1')] };
    copies.set(`${ISSUER}/certs`, {
      json: old,
      cacheControl: null,
      fetchedAt: now - KEY_SET_FRESH_MAX_MS,
      freshUntil: now + 1,
    });
    expect(await keysOf(idp, () => now, { shared: store }).keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    expect(certsAsked(idp)).toBe(4);
  });

  it('fetches alone while the shared copies fail, with one line for each copy not shared', async () => {
    const idp = issuerAt({ keys: [await publicKey('k1')], up: true });
    const shared = sharedCopies();
    shared.state.failing = true;
    const lines: unknown[] = [];
    const logger = { ...silent, warn: (fields: unknown) => void lines.push(fields) };
    for (const keys of [
      keysOf(idp, () => 0, { shared: shared.store, logger }),
      keysOf(idp, () => 0, { shared: shared.store, logger }),
    ])
      expect(await keys.keyFor({ alg: 'ES256', kid: 'k1' })).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(certsAsked(idp)).toBe(2);
    expect(lines).toEqual([
      { event: 'idp_share_failed', issuer: ISSUER, document: 'discovery', err: 'store down' },
      { event: 'idp_share_failed', issuer: ISSUER, document: 'jwks', err: 'store down' },
      { event: 'idp_share_failed', issuer: ISSUER, document: 'discovery', err: 'store down' },
      { event: 'idp_share_failed', issuer: ISSUER, document: 'jwks', err: 'store down' },
    ]);
  });

  it('shares no document a fetch refused', async () => {
    const idp = issuerAt({ keys: [await publicKey('k1')], up: true, metadataIssuer: 'https://other.example' });
    const { store, copies } = sharedCopies();
    expect(await keysOf(idp, () => 0, { shared: store }).keyFor({ alg: 'ES256', kid: 'k1' })).toBeUndefined();
    expect(idp.outcomes).toEqual(['wrong_issuer']);
    expect(copies.size).toBe(0);
  });
});
