// Unit tests of token managers sharing one token store, as replicas of one deployment do: a fake clock, a
// fake upstream token endpoint counting logins, and the memory token store standing in for Redis.
import { describe, expect, it } from 'vitest';
import { captureLogger, recordingTelemetry } from '../helpers/recorders.js';
import { createMemoryTokenStore } from '../../src/shared-state/memory-token-store.js';
import { createStoreHealth } from '../../src/shared-state/store-health.js';
import { StoreUnavailableError } from '../../src/shared-state/store-unavailable.js';
import type { TokenStore } from '../../src/shared-state/token-store.js';
import type { UpstreamHttp, UpstreamResponse } from '../../src/upstream/http.js';
import { createTokenManager, type TokenManager } from '../../src/upstream/token-manager.js';

const T0 = 1_700_000_000_000;
// expires_in "1000" seconds: refresh-ahead at 60 s before expiry, safety margin 5 s.
const LIFETIME = 1_000_000;
const REFRESH_AT = T0 + LIFETIME - 60_000;
const USABLE_UNTIL = T0 + LIFETIME - 5_000;

const tokenOk = (token: string): UpstreamResponse => ({
  status: 200,
  contentType: 'application/json',
  body: JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: '1000', scope: [], uniqueId: null, clientId: 'c' }),
});

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

interface StoreCalls {
  refresh: number;
  dropIfCurrent: Array<[number, boolean]>;
}

/** A store that counts what the managers ask of it and can be made to fail or hang, like Redis going away. */
function controllableStore(inner: TokenStore) {
  const calls: StoreCalls = { refresh: 0, dropIfCurrent: [] };
  const state = { mode: 'up' as 'up' | 'down' | 'hang' | 'publish-fails' };
  const unavailable = () => new StoreUnavailableError('token', 'connection refused');
  const store: TokenStore = {
    kind: 'memory',
    read: () => inner.read(),
    async refresh(obtain, wanted) {
      calls.refresh++;
      if (state.mode === 'down') throw unavailable();
      if (state.mode === 'hang') {
        // Answers only long after the caller stopped waiting, and then tries to log in.
        await new Promise((r) => setTimeout(r, 200));
        return inner.refresh(obtain, wanted);
      }
      if (state.mode === 'publish-fails') {
        await obtain();
        throw unavailable();
      }
      return inner.refresh(obtain, wanted);
    },
    async dropIfCurrent(generation) {
      if (state.mode !== 'up') throw unavailable();
      const dropped = await inner.dropIfCurrent(generation);
      calls.dropIfCurrent.push([generation, dropped]);
      return dropped;
    },
  };
  return { store, calls, state };
}

/** `count` token managers ("replicas") on one store, in front of one upstream token endpoint. */
function deployment(count: number, upstream: (n: number) => UpstreamResponse | Promise<UpstreamResponse> = (n) => tokenOk(`tok-${n}`)) {
  const time = { now: T0 };
  const clock = () => time.now;
  const shared = controllableStore(createMemoryTokenStore({ clock }));
  let logins = 0;
  const http: UpstreamHttp = {
    async request() {
      return upstream(++logins);
    },
  };
  const loggers = Array.from({ length: count }, () => captureLogger());
  const health = { up: 0, down: 0, fallbacks: 0 };
  const { telemetry } = recordingTelemetry();
  telemetry.sharedStore = (_store, up) => void (up ? health.up++ : health.down++);
  telemetry.sharedStoreFallback = () => void health.fallbacks++;
  const replicas: TokenManager[] = loggers.map((logger) =>
    createTokenManager({
      http,
      authUrl: 'https://auth.example',
      clientId: 'c',
      clientSecret: 's',
      timeoutMs: 2_000,
      expiresInUnit: 'seconds',
      refreshAheadSeconds: 60,
      clock,
      random: () => 0.5,
      logger,
      telemetry,
      store: shared.store,
      storeHealth: createStoreHealth({ store: 'token', kind: 'memory', logger, telemetry }),
      storeTimeoutMs: 20,
      storeWaitMs: 20,
    }),
  );
  const events = (name: string) => loggers.map((l) => l.lines.filter((line) => line.fields.event === name));
  return { replicas, time, store: shared, logins: () => logins, logs: loggers.flatMap((l) => l.lines), events, health };
}

describe('token managers sharing one token store', () => {
  it('log in once for three replicas starting together, and then ask the store nothing per search', async () => {
    const d = deployment(3);
    const tokens = await Promise.all(d.replicas.flatMap((r) => [r.getToken(), r.getToken(), r.getToken()]));
    expect(new Set(tokens)).toEqual(new Set(['tok-1']));
    expect(d.logins()).toBe(1);
    expect(d.store.calls.refresh).toBe(3);

    d.time.now = REFRESH_AT - 1;
    for (const r of d.replicas) for (let i = 0; i < 10; i++) expect(await r.getToken()).toBe('tok-1');
    expect(d.store.calls.refresh).toBe(3);
    expect(d.replicas[0]!.status()).toEqual({ hasToken: true, expiresAt: T0 + LIFETIME, lastError: null, consecutiveFailures: 0, retryAt: null });
  });

  it('refreshes ahead of expiry once for the deployment, each replica serving its copy meanwhile', async () => {
    const d = deployment(3);
    for (const r of d.replicas) await r.getToken();
    d.time.now = REFRESH_AT;
    for (const r of d.replicas) expect(await r.getToken()).toBe('tok-1');
    await flush();
    for (const r of d.replicas) expect(await r.getToken()).toBe('tok-2');
    expect(d.logins()).toBe(2);
  });

  it('refreshes once when three replicas see the same upstream 401', async () => {
    const d = deployment(3);
    const before = await Promise.all(d.replicas.map((r) => r.getToken()));
    for (const [i, r] of d.replicas.entries()) r.invalidate(before[i]!);
    const after = await Promise.all(d.replicas.map((r) => r.getToken()));
    expect(after).toEqual(['tok-2', 'tok-2', 'tok-2']);
    expect(d.logins()).toBe(2);
    // Only the first drop found its generation current.
    expect(d.store.calls.dropIfCurrent.filter(([, dropped]) => dropped)).toEqual([[1, true]]);
  });

  it('refreshes once when the 401s arrive after another replica already refreshed', async () => {
    const d = deployment(3);
    const [a, b, c] = d.replicas as [TokenManager, TokenManager, TokenManager];
    for (const r of d.replicas) await r.getToken();
    a.invalidate('tok-1');
    expect(await a.getToken()).toBe('tok-2');
    // B and C come late with the same 401: tok-2 is current, their drop does nothing, they take tok-2.
    b.invalidate('tok-1');
    c.invalidate('tok-1');
    expect(await b.getToken()).toBe('tok-2');
    expect(await c.getToken()).toBe('tok-2');
    await flush();
    expect(d.logins()).toBe(2);
    expect(d.store.calls.dropIfCurrent.map(([, dropped]) => dropped)).toEqual([true, false, false]);
  });

  it('never takes a published token that is already inside its safety margin', async () => {
    const d = deployment(2);
    const [a, b] = d.replicas as [TokenManager, TokenManager];
    expect(await a.getToken()).toBe('tok-1');
    d.time.now = USABLE_UNTIL;
    expect(await b.getToken()).toBe('tok-2');
    expect(d.logins()).toBe(2);
  });

  it('falls back to its own login while the store is down, logging the outage once per replica, and shares again when it answers', async () => {
    const d = deployment(3);
    d.store.state.mode = 'down';
    const first = await Promise.all(d.replicas.map((r) => r.getToken()));
    expect(new Set(first).size).toBe(3);
    // A second refresh during the same outage: another own login each, no further log line.
    for (const [i, r] of d.replicas.entries()) r.invalidate(first[i]!);
    const own = await Promise.all(d.replicas.map((r) => r.getToken()));
    expect(new Set(own).size).toBe(3);
    expect(d.logins()).toBe(6);
    for (const lines of d.events('shared_store_down')) {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'warn', fields: { store: 'token' } });
    }
    expect(d.health.fallbacks).toBe(6);

    // The store answers again: the next refresh of each replica goes through it, one login for all.
    d.store.state.mode = 'up';
    for (const [i, r] of d.replicas.entries()) r.invalidate(own[i]!);
    const back = await Promise.all(d.replicas.map((r) => r.getToken()));
    expect(back).toEqual(['tok-7', 'tok-7', 'tok-7']);
    expect(d.logins()).toBe(7);
    for (const lines of d.events('shared_store_up')) expect(lines).toHaveLength(1);
    for (const lines of d.events('shared_store_down')) expect(lines).toHaveLength(1);
  });

  it('falls back when the store is slower than its timeout, and refuses the login the store asks for too late', async () => {
    const d = deployment(1);
    d.store.state.mode = 'hang';
    const started = Date.now();
    expect(await d.replicas[0]!.getToken()).toBe('tok-1');
    // waitMs 20 + four command bounds of 20 ms, far below the 200 ms the store takes.
    expect(Date.now() - started).toBeLessThan(180);
    await new Promise((r) => setTimeout(r, 250));
    expect(d.logins()).toBe(1);
    expect(d.events('shared_store_down')[0]).toHaveLength(1);
  });

  it('keeps the token it logged in for when only publishing it failed', async () => {
    const d = deployment(1);
    d.store.state.mode = 'publish-fails';
    expect(await d.replicas[0]!.getToken()).toBe('tok-1');
    expect(d.logins()).toBe(1);
    expect(d.events('shared_store_down')[0]).toHaveLength(1);
  });

  it('treats a failing token endpoint as the upstream failing, not the store: backoff as without a store', async () => {
    const d = deployment(2, (n) => (n === 1 ? { status: 500, contentType: 'application/json', body: '{}' } : tokenOk(`tok-${n}`)));
    const [a, b] = d.replicas as [TokenManager, TokenManager];
    await expect(a.getToken()).rejects.toMatchObject({ code: 'token_unavailable' });
    expect(a.status()).toMatchObject({ consecutiveFailures: 1, retryAt: T0 + 500, lastError: 'token endpoint answered 500' });
    expect(d.logs.filter((l) => String(l.fields.event).startsWith('shared_store'))).toEqual([]);
    expect(d.health.fallbacks).toBe(0);
    // During A's backoff, B (not backing off) logs in through the store; after the backoff A takes B's token.
    expect(await b.getToken()).toBe('tok-2');
    d.time.now = T0 + 500;
    expect(await a.getToken()).toBe('tok-2');
    expect(d.logins()).toBe(2);
  });
});
