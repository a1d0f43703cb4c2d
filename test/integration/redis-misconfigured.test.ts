// A gateway on a Redis set up wrongly (real redis-server processes of the test's own): Sentinels asked for a master
// name they do not know, cluster nodes that are a plain Redis, a refused password, a password for a Redis that wants
// none. Each says why in one line naming the cause, logs it once (not once per retry), prints nothing on stderr
// (no ioredis `[WARN]`), and meanwhile answers every search with client credentials on its own, holding gateway
// tokens back while it cannot read the deployment's revocations.
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createNodeRedis } from '../../src/runtime/redis/client.js';
import { freePort } from '../helpers/free-port.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { MASTER_NAME, startRedisSentinels, type SentinelProcesses } from '../helpers/redis-sentinel.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { captureLogger, CLIENTS, startStack, type CapturedLog, type Stack } from '../helpers/stack.js';

const redisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const PASSWORD = 'redis-password-for-the-test-5b8e';
/** Long enough for ioredis to retry several times (every 0.2 s, growing to 2 s). */
const WATCH_MS = 5000;
const number = (i: number) => `+44207946${String(2000 + i).padStart(4, '0')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What reaches stderr in this process while a test runs: ioredis writes its warnings with console.warn. */
let stderr: string[] = [];
beforeEach(() => {
  stderr = [];
  const keep = (...args: unknown[]) => void stderr.push(args.map(String).join(' '));
  vi.spyOn(console, 'warn').mockImplementation(keep);
  vi.spyOn(console, 'error').mockImplementation(keep);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    keep(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const redisLines = (logs: CapturedLog[]) => logs.filter((l) => String(l.fields.event).startsWith('redis_'));

/**
 * A gateway with `env` watched for {@link WATCH_MS} while it serves searches: every answer 200 (with a gateway token
 * when Redis is `usable`; else with HTTP Basic, a gateway token held back with 503); returns its Redis log lines.
 */
async function watch(env: Record<string, string>, usable: boolean): Promise<CapturedLog[]> {
  const stack: Stack = await startStack({ env: { REDIS_TIMEOUT_MS: '250', ...env } });
  try {
    const token = await stack.login('crm');
    if (!usable) {
      const held = await stack.search(number(999), token);
      await held.arrayBuffer();
      expect([held.status, held.headers.get('retry-after')]).toEqual([503, '1']);
    }
    const basic = { headers: { authorization: `Basic ${btoa(`crm:${CLIENTS.crm}`)}` } };
    const until = Date.now() + WATCH_MS;
    for (let i = 0; Date.now() < until; i++) {
      const res = await stack.search(number(i), token, usable ? {} : basic);
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      await sleep(250);
    }
    const logged = JSON.stringify(stack.logs);
    expect(logged).not.toContain(PASSWORD);
    return redisLines(stack.logs);
  } finally {
    await stack.close();
  }
}

describe.skipIf(!redisServer)('a gateway on Redis set up wrongly', () => {
  let sentinel: SentinelProcesses | undefined;
  let redis: OwnRedis | undefined;
  afterAll(async () => {
    await sentinel?.stop();
  });
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  it('names a master the Sentinels do not know, once, not as Sentinels out of reach', async () => {
    sentinel ??= await startRedisSentinels();
    const lines = await watch({ REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_MASTER: 'no-such-primary' }, false);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({
      event: 'redis_unavailable_at_start',
      kind: 'sentinel',
      cause: 'unknown_master',
    });
    expect(lines[0]!.level).toBe('error');
    expect(lines[0]!.msg).toMatch(/Sentinels know no primary named "no-such-primary" \(REDIS_SENTINEL_MASTER\)/);
    expect(stderr).toEqual([]);
  }, 40_000);

  it('says once that the Sentinels want no password, shares through them, and prints nothing on stderr', async () => {
    sentinel ??= await startRedisSentinels();
    const lines = await watch(
      {
        REDIS_SENTINELS: sentinel.sentinels,
        REDIS_SENTINEL_MASTER: MASTER_NAME,
        REDIS_SENTINEL_PASSWORD: PASSWORD,
      },
      true,
    );
    expect(lines.map((l) => [l.fields.event, l.fields.server])).toEqual([
      ['redis_password_unneeded', 'sentinel'],
      ['redis_ready', undefined],
    ]);
    expect(lines[0]!.msg).toMatch(/the Sentinels want no password, but REDIS_SENTINEL_PASSWORD/);
    expect(stderr).toEqual([]);
  }, 40_000);

  it('names cluster nodes that are not in cluster mode, once, without a line per retry or a warning on stderr', async () => {
    // A password for a Redis that wants none, too: ioredis would print `[WARN] … a password was supplied` on
    // stderr for each of its connections.
    redis = await startOwnRedis();
    const lines = await watch({ REDIS_CLUSTER_NODES: `127.0.0.1:${redis.port}`, REDIS_PASSWORD: PASSWORD }, false);
    expect(lines.map((l) => [l.fields.event, l.fields.cause])).toEqual([
      ['redis_password_unneeded', undefined],
      ['redis_unavailable_at_start', 'not_cluster'],
    ]);
    expect(lines[1]!.msg).toMatch(/REDIS_CLUSTER_NODES names a Redis that is not in cluster mode/);
    expect(stderr).toEqual([]);
  }, 30_000);

  it('names a refused password, once', async () => {
    redis = await startOwnRedis(undefined, { args: ['--requirepass', 'the-right-one-2c9d'] });
    const lines = await watch({ REDIS_URL: redis.url, REDIS_PASSWORD: PASSWORD }, false);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({
      event: 'redis_unavailable_at_start',
      kind: 'url',
      cause: 'password_refused',
    });
    expect(lines[0]!.msg).toMatch(/Redis refused the password \(REDIS_PASSWORD/);
    expect(stderr).toEqual([]);
  }, 30_000);

  it('says once that a Redis wants no password, shares through it, and prints nothing on stderr', async () => {
    redis = await startOwnRedis();
    const lines = await watch({ REDIS_URL: redis.url, REDIS_PASSWORD: PASSWORD }, true);
    expect(lines.map((l) => l.fields.event)).toEqual(['redis_password_unneeded', 'redis_ready']);
    expect(lines[0]!.msg).toMatch(/Redis wants no password, but REDIS_PASSWORD/);
    expect(stderr).toEqual([]);
  }, 30_000);

  it('logs a cause found after the start once, as a transition from the one logged at the start', async () => {
    const port = await freePort();
    const logger = captureLogger();
    const client = createNodeRedis(
      { target: { kind: 'url', url: `redis://127.0.0.1:${port}` }, username: undefined, password: PASSWORD, tls: null },
      logger,
      { commandTimeoutMs: 250 },
    );
    try {
      expect(await client.ready(300)).toBe(false);
      // Then a Redis comes up there that wants another password; ioredis keeps retrying.
      redis = await startOwnRedis(port, { args: ['--requirepass', 'the-right-one-2c9d'] });
      await sleep(WATCH_MS);
      expect(redisLines(logger.lines).map((l) => [l.fields.event, l.fields.cause])).toEqual([
        ['redis_unavailable_at_start', 'unreachable'],
        ['redis_error', 'password_refused'],
      ]);
      expect(JSON.stringify(logger.lines)).not.toContain(PASSWORD);
    } finally {
      await client.close();
    }
  }, 30_000);
});
