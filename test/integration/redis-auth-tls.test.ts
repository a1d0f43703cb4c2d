// Two gateways on a Redis that wants what managed Redis wants: an ACL user with a password, or TLS only (a
// redis-server of the test's own, its certificate made by openssl for the test). Sharing works through either,
// and a wrong password shows in no log line: each gateway answers what needs no gateway token on its own and holds
// gateway tokens back (it cannot check them against the deployment's revocations).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { startReplicas, type Replicas } from '../helpers/replicas.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';

const hasRedisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const hasOpenssl = checkRequirement(commandRequirement('openssl', ['version'], 'the openssl command (TLS test)'));

const ACL_USER = 'callerid-gw';
const ACL_PASSWORD = 'acl-password-for-the-test-4f1c';
/** The default user off: only the ACL user gets in. */
const ACL_ARGS = ['--user', 'default', 'off', '--user', ACL_USER, 'on', `>${ACL_PASSWORD}`, '~*', '&*', '+@all'];
const NUMBERS = ['020 7946 0001', '020 7946 0002', '020 7946 0003', '0161 496 0001', '020 7946 0999'];

/** Every number asked on both gateways at once, with a gateway token or (`basic`) with HTTP Basic; the statuses. */
async function askBoth(deployment: Replicas, basic = false): Promise<number[]> {
  const tokens = await Promise.all(deployment.replicas.map((r) => r.login()));
  const answers = await Promise.all(
    NUMBERS.flatMap((n) =>
      deployment.replicas.map(async (r, i) => {
        const res = basic ? await r.searchBasic(n) : await r.search(n, tokens[i]!);
        await res.arrayBuffer();
        return res.status;
      }),
    ),
  );
  return answers;
}

/** Gateway tokens held back on each replica: 503 problem+json with Retry-After, and /readyz says why. */
async function expectTokensHeldBack(deployment: Replicas): Promise<void> {
  for (const r of deployment.replicas) {
    const res = await r.search(NUMBERS[0]!, await r.login());
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('1');
    await res.arrayBuffer();
    const ready = await fetch(`${r.gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { detail: string }).detail).toMatch(/revoked tokens not yet read/);
  }
}

async function storeUp(deployment: Replicas, i: number, store: string): Promise<number | undefined> {
  const text = await (await fetch(`${deployment.replicas[i]!.gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`callerid_gateway_shared_store_up{store="${store}"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/**
 * Two gateways with `env`, every number asked on both: each answer 200, and, when `shared`, one login and one upstream
 * search per number for both with the lookup store up; otherwise each gateway on its own (with HTTP Basic: gateway
 * tokens are held back). Returns their log lines.
 */
async function expectBothAnswer(env: Record<string, string>, shared: boolean): Promise<string> {
  const deployment = await startReplicas(2, { env: { REDIS_TIMEOUT_MS: '500', ...env } });
  try {
    if (!shared) await expectTokensHeldBack(deployment);
    expect((await askBoth(deployment, !shared)).every((s) => s === 200)).toBe(true);
    const stats = deployment.simulator.controls.stats();
    expect(stats.tokenCalls).toBe(shared ? 1 : 2);
    expect(stats.searchCalls).toBe((shared ? 1 : 2) * NUMBERS.length);
    expect(await storeUp(deployment, 1, 'lookup')).toBe(shared ? 1 : 0);
    return JSON.stringify(deployment.replicas.flatMap((r) => r.logs));
  } finally {
    await deployment.close();
  }
}

describe.skipIf(!hasRedisServer)('gateways on a Redis with an ACL user', () => {
  let redis: OwnRedis;
  beforeAll(async () => {
    redis = await startOwnRedis(undefined, { args: ACL_ARGS });
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('share one login and one upstream search per number with REDIS_USERNAME and REDIS_PASSWORD', async () => {
    await expectBothAnswer({ REDIS_URL: redis.url, REDIS_USERNAME: ACL_USER, REDIS_PASSWORD: ACL_PASSWORD }, true);
  });

  it('answers Basic searches on its own with a wrong password, holds gateway tokens back, and logs no password', async () => {
    const wrong = 'wrong-password-9d2e';
    const logged = await expectBothAnswer(
      { REDIS_URL: redis.url, REDIS_USERNAME: ACL_USER, REDIS_PASSWORD: wrong },
      false,
    );
    expect(logged).not.toContain(wrong);
    expect(logged).not.toContain(ACL_PASSWORD);
  });
});

describe.skipIf(!hasRedisServer || !hasOpenssl)('gateways on a Redis that speaks TLS only', () => {
  let dir: string;
  let redis: OwnRedis;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callerid-redis-tls-'));
    const [certFile, keyFile] = [join(dir, 'server.pem'), join(dir, 'server-key.pem')];
    // A self-signed certificate for 127.0.0.1: the gateway trusts it only through REDIS_TLS_CA_FILE.
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        // Piped, not inherited: openssl's key-generation progress dots would otherwise land in a passing run's output;
        // on a failure the error carries them.
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    redis = await startOwnRedis(undefined, { tls: { certFile, keyFile, caFile: certFile } });
  });
  afterAll(async () => {
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('share one login and one upstream search per number over rediss:// with REDIS_TLS_CA_FILE', async () => {
    expect(redis.url).toMatch(/^rediss:\/\//);
    await expectBothAnswer({ REDIS_URL: redis.url, REDIS_TLS_CA_FILE: join(dir, 'server.pem') }, true);
  });

  it('refuses a server whose certificate it cannot verify, answers Basic searches on its own and holds tokens back', async () => {
    // REDIS_TLS=true without the CA: the self-signed certificate is not trusted, so nothing is shared.
    await expectBothAnswer({ REDIS_URL: redis.url.replace(/^rediss:/, 'redis:'), REDIS_TLS: 'true' }, false);
  });
});
