// Unit tests of token managers sharing one token store, as replicas of one deployment do: a fake clock, a
// fake upstream token endpoint counting logins, and the memory token store standing in for Redis.
import { describe, expect, it } from 'vitest';
import { captureLogger, recordingTelemetry } from '../../test/helpers/recorders.js';
import type { FinishedSpan } from '../observability/tracing/span.js';
import { createTracer } from '../observability/tracing/tracer.js';
import { createMemoryTokenStore } from '../shared-state/memory/memory-token-store.js';
import { createStoreHealth } from '../shared-state/store-health.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';
import type { TokenStore } from '../shared-state/token-store.js';
import type { UpstreamHttp, UpstreamResponse } from '../base/upstream-http.js';
import { createTokenManager, type TokenManager } from './token-manager.js';

const T0 = 1_700_000_000_000;
// expires_in "1000" seconds: refresh-ahead at 60 s before expiry, safety margin 5 s.
const LIFETIME = 1_000_000;
const REFRESH_AT = T0 + LIFETIME - 60_000;
const USABLE_UNTIL = T0 + LIFETIME - 5_000;

const tokenOk = (token: string): UpstreamResponse => ({
  status: 200,
  contentType: 'application/json',
  body: JSON.stringify({
    access_token: token,
    token_type: 'Bearer',
    expires_in: '1000',
    scope: [],
    uniqueId: null,
    clientId: 'c',
  }),
});

/** Where and as whom every manager here logs in, and when it refreshes. */
const ENDPOINT = {
  authUrl: 'https://auth.example',
  clientId: 'c',
  clientSecret: 's',
  timeoutMs: 2_000,
  expiresInUnit: 'seconds',
  refreshAheadSeconds: 60,
} as const;

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

interface StoreCalls {
  refresh: number;
  read: number;
  offer: number;
  dropIfCurrent: Array<[number, boolean]>;
}

/** A store that counts what the managers ask of it and can be made to fail or hang, like Redis going away. */
function controllableStore(inner: TokenStore) {
  const calls: StoreCalls = { refresh: 0, read: 0, offer: 0, dropIfCurrent: [] };
  const state = { mode: 'up' as 'up' | 'down' | 'hang' | 'publish-fails' };
  const unavailable = () => new StoreUnavailableError('token', 'connection refused');
  const store: TokenStore = {
    kind: 'memory',
    async read() {
      calls.read++;
      if (state.mode === 'down') throw unavailable();
      if (state.mode === 'hang') await new Promise((r) => setTimeout(r, 200));
      return inner.read();
    },
    async offer(token) {
      calls.offer++;
      if (state.mode === 'down') throw unavailable();
      return inner.offer(token);
    },
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
function deployment(
  count: number,
  upstream: (n: number) => UpstreamResponse | Promise<UpstreamResponse> = (n) => tokenOk(`tok-${n}`),
) {
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
      ...ENDPOINT,
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
    const upstreamTokens = await Promise.all(d.replicas.flatMap((r) => [r.getToken(), r.getToken(), r.getToken()]));
    expect(new Set(upstreamTokens)).toEqual(new Set(['tok-1']));
    expect(d.logins()).toBe(1);
    expect(d.store.calls.refresh).toBe(3);

    d.time.now = REFRESH_AT - 1;
    for (const r of d.replicas) for (let i = 0; i < 10; i++) expect(await r.getToken()).toBe('tok-1');
    expect(d.store.calls.refresh).toBe(3);
    expect(d.replicas[0]!.status()).toEqual({
      hasToken: true,
      expiresAt: T0 + LIFETIME,
      lastError: null,
      consecutiveFailures: 0,
      retryAt: null,
    });
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
    const d = deployment(2, (n) =>
      n === 1 ? { status: 500, contentType: 'application/json', body: '{}' } : tokenOk(`tok-${n}`),
    );
    const [a, b] = d.replicas as [TokenManager, TokenManager];
    await expect(a.getToken()).rejects.toMatchObject({ code: 'token_unavailable' });
    expect(a.status()).toMatchObject({
      consecutiveFailures: 1,
      retryAt: T0 + 500,
      lastError: 'token endpoint answered 500',
    });
    expect(d.logs.filter((l) => String(l.fields.event).startsWith('shared_store'))).toEqual([]);
    expect(d.health.fallbacks).toBe(0);
    // During A's backoff, B (not backing off) logs in through the store; after the backoff A takes B's token.
    expect(await b.getToken()).toBe('tok-2');
    d.time.now = T0 + 500;
    expect(await a.getToken()).toBe('tok-2');
    expect(d.logins()).toBe(2);
  });

  describe('after falling back to its own token', () => {
    /** Three replicas that logged in on their own while the store was down; the store then answers again. */
    async function fellBack(upstream?: (n: number) => Promise<UpstreamResponse>) {
      const d = deployment(3, upstream);
      d.store.state.mode = 'down';
      const own = await Promise.all(d.replicas.map((r) => r.getToken()));
      expect(own).toEqual(['tok-1', 'tok-2', 'tok-3']);
      return { d, own };
    }

    it('returns to one shared token as soon as the store answers, without a login or a refresh, and says so once', async () => {
      const { d } = await fellBack();
      expect(d.health).toMatchObject({ up: 3, down: 3 });
      d.store.state.mode = 'up';
      // Not before the probe interval: the store has just failed.
      for (const r of d.replicas) await r.getToken();
      expect(d.store.calls.read).toBe(0);

      d.time.now += 2_000;
      // The first replica's search gets its own token at once; its probe finds no token published and offers it.
      expect(await d.replicas[0]!.getToken()).toBe('tok-1');
      await flush();
      // The others adopt it at their next search, each keeping its own until the probe answered.
      expect(await d.replicas[1]!.getToken()).toBe('tok-2');
      expect(await d.replicas[2]!.getToken()).toBe('tok-3');
      await flush();
      for (const r of d.replicas) expect(await r.getToken()).toBe('tok-1');
      expect(d.logins()).toBe(3);
      expect(d.store.calls.refresh).toBe(3);
      // The gauge back to 1 on every replica (three transitions up), one log line each.
      expect(d.health).toMatchObject({ up: 6, down: 3 });
      for (const lines of d.events('shared_store_up')) expect(lines).toHaveLength(1);
      expect(d.events('upstream_token_rejoined').map((lines) => lines.map((l) => l.fields.how))).toEqual([
        ['offered'],
        ['adopted'],
        ['adopted'],
      ]);
      // Nothing more is asked of the store per search.
      const reads = d.store.calls.read;
      d.time.now += 10_000;
      for (const r of d.replicas) await r.getToken();
      await flush();
      expect(d.store.calls.read).toBe(reads);

      // One generation for all: the same 401 on three replicas drops it once and costs one login.
      for (const r of d.replicas) r.invalidate('tok-1');
      expect(await Promise.all(d.replicas.map((r) => r.getToken()))).toEqual(['tok-4', 'tok-4', 'tok-4']);
      expect(d.logins()).toBe(4);
      expect(d.store.calls.dropIfCurrent.filter(([, dropped]) => dropped)).toHaveLength(1);
    });

    it('asks a store that is still down at most once per interval, one question at a time, never holding a search', async () => {
      const { d } = await fellBack();
      const [a] = d.replicas as [TokenManager];
      d.time.now += 2_000;
      expect(await Promise.all(Array.from({ length: 10 }, () => a.getToken()))).toEqual(Array(10).fill('tok-1'));
      await flush();
      expect(d.store.calls.read).toBe(1);
      d.time.now += 1_999;
      await a.getToken();
      await flush();
      expect(d.store.calls.read).toBe(1);
      d.time.now += 1;
      await a.getToken();
      await flush();
      expect(d.store.calls.read).toBe(2);
      expect(d.store.calls.offer).toBe(0);
      // Failed probes are neither new outages nor fallbacks.
      expect(d.events('shared_store_down')[0]).toHaveLength(1);
      expect(d.health.fallbacks).toBe(3);
      expect(await a.getToken()).toBe('tok-1');
    });

    it('gives up a probe the store answers too late, and does not count that late answer as the store being back', async () => {
      const { d } = await fellBack();
      const [a] = d.replicas as [TokenManager];
      d.store.state.mode = 'hang';
      d.time.now += 2_000;
      const started = Date.now();
      expect(await a.getToken()).toBe('tok-1');
      expect(Date.now() - started).toBeLessThan(20);
      // The probe's bound (three store timeouts of 20 ms) passes long before the store's 200 ms answer.
      await new Promise((r) => setTimeout(r, 250));
      expect(d.events('shared_store_up')[0]).toEqual([]);
      expect(d.store.calls.offer).toBe(0);
      expect(await a.getToken()).toBe('tok-1');
    });

    it('keeps its own token while another replica is logging in through the store, and rejoins at a later probe', async () => {
      let gate: Promise<void> | null = null;
      const { d } = await fellBack(async (n) => {
        if (gate !== null) await gate;
        return tokenOk(`tok-${n}`);
      });
      const [a, b] = d.replicas as [TokenManager, TokenManager];
      d.store.state.mode = 'up';
      // B's 401 sends it to the store for a new token; its login is under way when A's probe comes.
      let release!: () => void;
      gate = new Promise<void>((r) => (release = r));
      b.invalidate('tok-2');
      const bToken = b.getToken();
      d.time.now += 2_000;
      expect(await a.getToken()).toBe('tok-1');
      await flush();
      expect(d.store.calls.offer).toBe(1);
      release();
      gate = null;
      expect(await bToken).toBe('tok-4');
      expect(await a.getToken()).toBe('tok-1');
      d.time.now += 2_000;
      await a.getToken();
      await flush();
      expect(await a.getToken()).toBe('tok-4');
      expect(d.logins()).toBe(4);
      expect(d.events('upstream_token_rejoined')[0]!.map((l) => l.fields.how)).toEqual(['adopted']);
    });
  });
});

describe('a login made through the token store', () => {
  it('goes under the span of the request that needed the token, and names its own span to the upstream', async () => {
    const spans: FinishedSpan[] = [];
    const tracer = createTracer(
      { name: 'always_on', ratio: 1, callerPerSecond: 100 },
      { now: () => T0, end: (span) => spans.push(span) },
    );
    const traceparents: (string | undefined)[] = [];
    const manager = createTokenManager({
      http: {
        async request(req) {
          traceparents.push(req.headers?.['traceparent']);
          return tokenOk('tok');
        },
      },
      ...ENDPOINT,
      clock: () => T0,
      store: createMemoryTokenStore({ clock: () => T0 }),
      tracer,
    });
    const lookup = tracer.startSpan('lookup', undefined);
    expect(await manager.getToken(lookup)).toBe('tok');
    const login = spans.find((s) => s.name === 'POST /token/login')!;
    expect(login).toMatchObject({ kind: 'client', parentSpanId: lookup.context!.spanId });
    expect(traceparents).toEqual([`00-${lookup.context!.traceId}-${login.context.spanId}-03`]);
  });
});
