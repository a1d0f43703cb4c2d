// The per-process implementations of the token-store and counter-store ports.
import { describe, expect, it } from 'vitest';
import { createMemoryCounterStore } from './memory-counter-store.js';
import { createMemoryTokenStore } from './memory-token-store.js';

describe('memory token store', () => {
  const token = (n: number, now: number) => ({ token: `t${n}`, obtainedAt: now, expiresAt: now + 60_000 });

  it('makes one obtain for concurrent refreshes and numbers the token', async () => {
    let now = 1_000;
    const store = createMemoryTokenStore({ clock: () => now });
    let calls = 0;
    const obtain = async () => token(++calls, now);
    const got = await Promise.all(
      Array.from({ length: 10 }, () => store.refresh(obtain, { newerThan: null, validForMs: 1_000, waitMs: 100 })),
    );
    expect(calls).toBe(1);
    expect(new Set(got.map((t) => t.generation))).toEqual(new Set([1]));
    expect(await store.read()).toMatchObject({ token: 't1', generation: 1 });
    now += 61_000;
    expect(await store.read()).toBeNull();
  });

  it('drops a token only while its generation is current, so the same 401 seen twice refreshes once', async () => {
    const store = createMemoryTokenStore({ clock: () => 0 });
    let calls = 0;
    const obtain = async () => token(++calls, 0);
    const first = await store.refresh(obtain, { newerThan: null, validForMs: 0, waitMs: 0 });
    expect(await store.dropIfCurrent(first.generation)).toBe(true);
    const second = await store.refresh(obtain, { newerThan: first.generation, validForMs: 0, waitMs: 0 });
    expect(await store.dropIfCurrent(first.generation)).toBe(false);
    const third = await store.refresh(obtain, { newerThan: first.generation, validForMs: 0, waitMs: 0 });
    expect(third).toEqual(second);
    expect(calls).toBe(2);
  });

  it('returns the published token only while it stays valid for what the caller needs', async () => {
    const store = createMemoryTokenStore({ clock: () => 0 });
    let calls = 0;
    const obtain = async () => token(++calls, 0);
    await store.refresh(obtain, { newerThan: null, validForMs: 0, waitMs: 0 });
    await store.refresh(obtain, { newerThan: null, validForMs: 120_000, waitMs: 0 });
    expect(calls).toBe(2);
  });
});

describe('memory token store offers', () => {
  const token = (name: string, now: number) => ({ token: name, obtainedAt: now, expiresAt: now + 60_000 });

  it('publishes an offered token when none is, numbered after the last generation, and keeps it against later offers', async () => {
    let now = 0;
    const store = createMemoryTokenStore({ clock: () => now });
    const first = await store.refresh(async () => token('t1', now), { newerThan: null, validForMs: 0, waitMs: 0 });
    expect(await store.dropIfCurrent(first.generation)).toBe(true);
    expect(await store.offer(token('own-a', now))).toEqual({ ...token('own-a', 0), generation: 2 });
    // A second replica's offer finds that one published and gets it instead.
    expect(await store.offer(token('own-b', now))).toMatchObject({ token: 'own-a', generation: 2 });
    now += 60_000;
    expect(await store.offer(token('own-c', now))).toMatchObject({ token: 'own-c', generation: 3 });
  });

  it('publishes nothing while a refresh is logging in, and never logs in itself', async () => {
    const store = createMemoryTokenStore({ clock: () => 0 });
    let release!: () => void;
    const login = store.refresh(() => new Promise((r) => (release = () => r(token('t1', 0)))), {
      newerThan: null,
      validForMs: 0,
      waitMs: 0,
    });
    expect(await store.offer(token('own', 0))).toBeNull();
    release();
    expect(await login).toMatchObject({ token: 't1', generation: 1 });
    expect(await store.offer(token('own', 0))).toMatchObject({ token: 't1', generation: 1 });
  });
});

describe('memory counter store', () => {
  it('refuses without counting once the limit would be passed, and opens a new window after reset', async () => {
    let now = 0;
    const store = createMemoryCounterStore({ clock: () => now });
    expect(await store.consume('k', 2, 3, 1_000)).toEqual({ allowed: true, count: 2, resetAt: 1_000 });
    expect(await store.consume('k', 2, 3, 1_000)).toEqual({ allowed: false, count: 2, resetAt: 1_000 });
    expect(await store.consume('k', 1, 3, 1_000)).toMatchObject({ allowed: true, count: 3 });
    now = 1_000;
    expect(await store.get('k')).toBeNull();
    expect(await store.consume('k', 1, 3, 1_000)).toEqual({ allowed: true, count: 1, resetAt: 2_000 });
  });

  it('adds and takes back without a limit, never below zero', async () => {
    const store = createMemoryCounterStore({ clock: () => 0 });
    expect(await store.add('k', 5, 1_000)).toEqual({ count: 5, resetAt: 1_000 });
    expect(await store.add('k', -7, 1_000)).toEqual({ count: 0, resetAt: 1_000 });
    expect(await store.get('missing')).toBeNull();
  });
});
