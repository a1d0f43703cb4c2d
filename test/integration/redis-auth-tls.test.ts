// Two gateways on a Redis that wants what managed Redis wants: an ACL user with a password, or TLS only (a
// redis-server of the test's own, its certificate made by openssl for the test). Sharing works through either,
// and a wrong password costs no answer and shows in no log line.
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

/** Every number asked on both gateways at once; the statuses. */
async function askBoth(deployment: Replicas): Promise<number[]> {
  const tokens = await Promise.all(deployment.replicas.map((r) => r.login()));
  const answers = await Promise.all(
    NUMBERS.flatMap((n) =>
      deployment.replicas.map(async (r, i) => {
        const res = await r.search(n, tokens[i]!);
        await res.arrayBuffer();
        return res.status;
      }),
    ),
  );
  return answers;
}

async function storeUp(deployment: Replicas, i: number, store: string): Promise<number | undefined> {
  const text = await (await fetch(`${deployment.replicas[i]!.gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`callerid_gateway_shared_store_up{store="${store}"}`));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

/**
 * Two gateways with `env`, every number asked on both: each answer 200, and, when `shared`, one login and one upstream
 * search per number for both with the lookup store up; otherwise each gateway on its own. Returns their log lines.
 */
async function expectBothAnswer(env: Record<string, string>, shared: boolean): Promise<string> {
  const deployment = await startReplicas(2, { env: { REDIS_TIMEOUT_MS: '500', ...env } });
  try {
    expect((await askBoth(deployment)).every((s) => s === 200)).toBe(true);
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

  it('answers every search on its own with a wrong password, and logs no password', async () => {
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

  it('refuses a server whose certificate it cannot verify, and still answers every search', async () => {
    // REDIS_TLS=true without the CA: the self-signed certificate is not trusted, so nothing is shared.
    await expectBothAnswer({ REDIS_URL: redis.url.replace(/^rediss:/, 'redis:'), REDIS_TLS: 'true' }, false);
  });
});
