// The failed-login throttle under a Redis slower than REDIS_TIMEOUT_MS (a real redis-server of the test's own, made
// to sleep with DEBUG SLEEP on a side connection): a parallel burst of wrong secrets at /oauth2/revoke gets no more
// secrets checked than the window has left, counted by the `login_failed` lines (one per secret checked and found
// wrong); an honest login still gets its token while Redis does not answer.
import { Redis } from 'ioredis';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
/**
 * How long the gateway waits for Redis: well past what a busy 2-CPU machine makes a healthy command take (at 200 ms a
 * wrong secret counted before the stall can fall back to this process alone), well short of the stall.
 */
const TIMEOUT_MS = 500;
const LIMIT = 5;
const BURST = 400;
/** A wrong secret in the form (RFC 6749 section 5.2: 401 only where the client used HTTP Basic). */
const WRONG = 400;
/** Long enough for the whole burst to be answered while Redis sleeps, on a busy machine. */
const SLEEP_SECONDS = 6;

interface Attempt {
  client: string;
  secret: string;
  address: string;
}

async function revoke(base: string, { client, secret, address }: Attempt, dispatcher?: Agent): Promise<number> {
  const res = await request(`${base}/oauth2/revoke`, {
    ...(dispatcher ? { dispatcher } : {}),
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
    body: new URLSearchParams({ token: 'some-token', client_id: client, client_secret: secret }).toString(),
  });
  await res.body.arrayBuffer();
  return res.statusCode;
}

describe.skipIf(!redisServer)('the failed-login throttle with a Redis slower than REDIS_TIMEOUT_MS', () => {
  let redis: OwnRedis | undefined;
  let side: Redis | undefined;
  let stack: Stack;

  beforeAll(async () => {
    redis = await startOwnRedis(undefined, { args: ['--enable-debug-command', 'local'] });
    side = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await side.connect();
    stack = await startStack({
      env: {
        REDIS_URL: redis.url,
        REDIS_TIMEOUT_MS: String(TIMEOUT_MS),
        TRUST_PROXY_HOPS: '1',
        LOGIN_FAILURES_PER_CLIENT: String(LIMIT),
        LOGIN_FAILURES_PER_ADDRESS: '1000',
        LOGIN_FAILURE_WINDOW_SECONDS: '600',
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
    side?.disconnect();
    await redis?.stop();
  });

  const checked = (from: number) => stack.logs.slice(from).filter((l) => l.fields.event === 'login_failed').length;

  /** Redis sleeps from now on (answering everything late), until `awake` settles. */
  async function stall(): Promise<{ awake: Promise<unknown> }> {
    // Settles either way: a failed test may close the side connection before Redis wakes.
    const sleeping = side!.call('DEBUG', 'SLEEP', String(SLEEP_SECONDS)).catch(() => undefined);
    // Asleep: a PING on another connection gets no answer for longer than the gateway waits for one.
    const probe = new Redis(redis!.url, { maxRetriesPerRequest: 0 });
    const answer = await Promise.race([
      probe.ping(),
      new Promise<string>((r) => setTimeout(r, 2 * TIMEOUT_MS, 'asleep')),
    ]);
    probe.disconnect();
    expect(answer).toBe('asleep');
    return { awake: sleeping };
  }

  /** The throttle found Redis not answering and counted on this process. */
  const fellBack = (from: number) =>
    stack.logs.slice(from).some((l) => l.fields.event === 'shared_store_down' && l.fields.store === 'counter');

  /** Waits until the gateway counts in Redis again after a stall. */
  async function sharingResumed(from: number): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if (stack.logs.slice(from).some((l) => l.fields.event === 'shared_store_up' && l.fields.store === 'counter'))
        return;
      // An attempt from an address of its own makes the throttle ask Redis again.
      await revoke(stack.gateway.url, { client: 'ops', secret: CLIENTS.ops, address: '198.51.100.250' });
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the counter store did not come back');
  }

  /** The per-client-and-address counts in Redis (the keys are keyed hashes). */
  async function pairCounts(): Promise<(string | null)[]> {
    const keys = await side!.keys('*login-fail:pair:*');
    return keys.length === 0 ? [] : side!.mget(...keys);
  }

  async function burst(attempt: Omit<Attempt, 'secret'>): Promise<Record<number, number>> {
    const agent = new Agent({ connections: 64 });
    const statuses = await Promise.all(
      Array.from({ length: BURST }, (_, i) => revoke(stack.gateway.url, { ...attempt, secret: `guess-${i}` }, agent)),
    );
    await agent.close();
    const counts: Record<number, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    return counts;
  }

  it(`checks no secret more once ${LIMIT} wrong ones were counted before Redis slowed down`, async () => {
    const start = stack.logs.length;
    const pair = { client: 'pbx', address: '198.51.100.1' };
    for (let i = 0; i < LIMIT; i++)
      expect(await revoke(stack.gateway.url, { ...pair, secret: `wrong-${i}` })).toBe(WRONG);
    expect(checked(start)).toBe(LIMIT);

    const { awake } = await stall();
    const statuses = await burst(pair);
    expect(statuses).toEqual({ 429: BURST });
    expect(fellBack(start)).toBe(true);
    expect(checked(start)).toBe(LIMIT);
    // An honest client from another address still gets in while Redis does not answer: no 5xx.
    expect(await revoke(stack.gateway.url, { client: 'crm', secret: CLIENTS.crm, address: '198.51.100.2' })).toBe(200);
    await awake;
    await sharingResumed(start);
  }, 60_000);

  it('checks only what the window has left when Redis slows down part-way through it', async () => {
    const start = stack.logs.length;
    const pair = { client: 'crm', address: '198.51.100.3' };
    for (let i = 0; i < 3; i++) expect(await revoke(stack.gateway.url, { ...pair, secret: `wrong-${i}` })).toBe(WRONG);
    // Counted in Redis, not on this process alone.
    expect(await pairCounts()).toContain('3');

    const { awake } = await stall();
    const statuses = await burst(pair);
    expect(statuses).toEqual({ [WRONG]: LIMIT - 3, 429: BURST - (LIMIT - 3) });
    expect(fellBack(start)).toBe(true);
    expect(checked(start)).toBe(LIMIT);
    // The right secret of the client that failed is refused as with Redis answering: the window is full.
    expect(await revoke(stack.gateway.url, { ...pair, secret: CLIENTS.crm })).toBe(429);
    await awake;
    await sharingResumed(start);
    // Redis answers again: the pair's window is still full there too.
    expect(await revoke(stack.gateway.url, { ...pair, secret: CLIENTS.crm })).toBe(429);
    expect(checked(start)).toBe(LIMIT);
  }, 60_000);
});
