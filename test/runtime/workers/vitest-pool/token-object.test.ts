// The upstream-token Durable Object through the Workers token store, in real workerd against the simulator:
// one login for every isolate, persisted across a restart, dropped only by its current generation.
import { abortAllDurableObjects, reset } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import { createWorkerTokenStore } from '../../../../src/runtime/workers/workers-token-store.js';
import { StoreUnavailableError } from '../../../../src/shared-state/store-unavailable.js';
import type { TokenStore } from '../../../../src/shared-state/token-store.js';
import { RefreshFailure } from '../../../../src/upstream/token-endpoint.js';
import type { DurableObjectNamespace } from '../../../../src/runtime/workers/bindings.js';
import type { UpstreamTokenObjectRpc } from '../../../../src/runtime/workers/bindings.js';
import { simulator, tokenObjects, UPSTREAM_CLIENT_ID } from './control.js';

const ANY = { newerThan: null, validForMs: 60_000, waitMs: 1_000 };
let obtainCalls = 0;
const obtain = async () => {
  obtainCalls++;
  throw new Error('the Durable Object logs in itself; an isolate must never be asked to');
};
const store = (): TokenStore =>
  createWorkerTokenStore({
    namespace: tokenObjects,
    clientId: UPSTREAM_CLIENT_ID,
    timeoutMs: 1_000,
    upstreamTimeoutMs: 2_000,
  });

describe('upstream token Durable Object', () => {
  beforeEach(async () => {
    await reset();
    await simulator.reset();
    obtainCalls = 0;
  });

  it('makes one login at the upstream for 200 concurrent refreshes from two isolates', async () => {
    await simulator.faults({ tokenLatencyMs: 150 });
    const [a, b] = [store(), store()];
    const tokens = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).refresh(obtain, ANY)));
    expect(new Set(tokens.map((t) => t.token)).size).toBe(1);
    expect(new Set(tokens.map((t) => t.generation))).toEqual(new Set([1]));
    expect((await simulator.stats()).tokenCalls).toBe(1);
    expect(obtainCalls).toBe(0);
  });

  it('answers with its stored token after a restart instead of logging in again', async () => {
    const first = await store().refresh(obtain, ANY);
    await abortAllDurableObjects();
    const after = store();
    expect(await after.read()).toEqual(first);
    expect(await after.refresh(obtain, ANY)).toEqual(first);
    expect((await simulator.stats()).tokenCalls).toBe(1);
  });

  it('drops the token only while its generation is current, then publishes a newer one', async () => {
    const [a, b] = [store(), store()];
    const first = await a.refresh(obtain, ANY);
    expect(await b.dropIfCurrent(first.generation - 1)).toBe(false);
    expect(await a.dropIfCurrent(first.generation)).toBe(true);
    // The second isolate saw the same 401: its drop finds the token already gone.
    expect(await b.dropIfCurrent(first.generation)).toBe(false);
    expect(await b.read()).toBeNull();
    const next = await b.refresh(obtain, { ...ANY, newerThan: first.generation });
    expect(next.generation).toBe(first.generation + 1);
    expect(next.token).not.toBe(first.token);
    expect((await simulator.stats()).tokenCalls).toBe(2);
  });

  it('logs in again when the stored token would not stay valid long enough', async () => {
    await simulator.faults({ tokenLifetimeSeconds: 30 });
    const short = await store().refresh(obtain, { ...ANY, validForMs: 1_000 });
    const longer = await store().refresh(obtain, { ...ANY, validForMs: 60_000 });
    expect(longer.generation).toBe(short.generation + 1);
    expect((await simulator.stats()).tokenCalls).toBe(2);
  });

  it("passes the upstream's refusal on as a login failure, and answers retries with it during the back-off", async () => {
    await simulator.faults({ tokenErrorRate: 1 });
    const err = await store()
      .refresh(obtain, ANY)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RefreshFailure);
    expect((err as RefreshFailure).outcome).toBe('server_error');
    expect((err as RefreshFailure).status).toBe(500);
    await expect(store().refresh(obtain, ANY)).rejects.toBeInstanceOf(RefreshFailure);
    expect((await simulator.stats()).tokenCalls).toBe(1);
  });

  it("publishes an isolate's offered token when it holds none, persisted, and hands it to every isolate without a login", async () => {
    const [a, b] = [store(), store()];
    const obtainedAt = Date.now();
    const own = { token: 'own-login-of-isolate-a', obtainedAt, expiresAt: obtainedAt + 600_000 };
    const offered = await a.offer(own);
    expect(offered).toEqual({ ...own, generation: 1 });
    // Isolate B's own token is not published over it: B gets A's, and so does a refresh.
    expect(await b.offer({ ...own, token: 'own-login-of-isolate-b' })).toEqual(offered);
    await abortAllDurableObjects();
    expect(await b.refresh(obtain, ANY)).toEqual(offered);
    expect((await simulator.stats()).tokenCalls).toBe(0);
    // Numbered like any login: a 401 on it drops it, and the next login comes after it.
    expect(await b.dropIfCurrent(1)).toBe(true);
    expect((await b.refresh(obtain, { ...ANY, newerThan: 1 })).generation).toBe(2);
  });

  it('keeps its own token against an offer, and publishes none while a login is under way', async () => {
    const published = await store().refresh(obtain, ANY);
    const obtainedAt = Date.now();
    expect(await store().offer({ token: 'own', obtainedAt, expiresAt: obtainedAt + 600_000 })).toEqual(published);
    expect(await store().dropIfCurrent(published.generation)).toBe(true);
    await simulator.faults({ tokenLatencyMs: 300 });
    const login = store().refresh(obtain, { ...ANY, newerThan: published.generation });
    await new Promise((r) => setTimeout(r, 100));
    expect(await store().offer({ token: 'own', obtainedAt, expiresAt: obtainedAt + 600_000 })).toBeNull();
    expect((await login).generation).toBe(published.generation + 1);
  });

  it('is StoreUnavailableError within its deadline when the object does not answer', async () => {
    const silent = {
      idFromName: () => ({}),
      get: () => ({
        read: () => new Promise(() => {}),
        refresh: () => new Promise(() => {}),
        dropIfCurrent: () => new Promise(() => {}),
        offer: () => new Promise(() => {}),
      }),
    } as unknown as DurableObjectNamespace<UpstreamTokenObjectRpc>;
    const unreachable = createWorkerTokenStore({
      namespace: silent,
      clientId: UPSTREAM_CLIENT_ID,
      timeoutMs: 100,
      upstreamTimeoutMs: 100,
    });
    const started = Date.now();
    await expect(unreachable.read()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(unreachable.refresh(obtain, ANY)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(
      unreachable.offer({ token: 'own', obtainedAt: Date.now(), expiresAt: Date.now() + 60_000 }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
