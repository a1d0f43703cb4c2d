// Revoking access tokens of an identity provider on two gateways sharing a Redis (a redis-server of the test's own),
// each reading one clients file that maps oidc-provider's app to a client: POST /oauth2/revoke of such a token on A
// is refused on B within 1 s (p99), B having answered with it before; /oauth2/introspect names the mapped client;
// POST /admin/tokens/revoke-client cuts the client's tokens issued up to then, and a token issued after passes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import type { RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { signingKey, startIdp, type RunningIdp } from '../helpers/oidc-idp.mjs';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';
import { startFileGateways, UPSTREAM_CLIENTS } from '../helpers/stack.js';

const hasRedisServer = checkRequirement(commandRequirement('redis-server', ['--version'], 'the redis-server command'));
const AUDIENCE = 'https://callerid.example.test';
const CRM_APP = { id: 'crm-app', secret: 'crm-app-secret-0123456789' };
const OPS_SECRET = 'ops-file-secret-0123';

describe.skipIf(!hasRedisServer)('revoking access tokens of a trusted identity provider across replicas', () => {
  let simulator: SimulatorServer;
  let idp: RunningIdp;
  let redis: OwnRedis;
  let a: RunningGateway;
  let b: RunningGateway;

  const status = async (g: RunningGateway, token: string) => {
    const res = await fetch(`${g.url}/v2/contacts/search?what=%2B442079460001`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    return res.status;
  };
  const asOps = (g: RunningGateway, path: string, token: string) =>
    fetch(`${g.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: 'ops', client_secret: OPS_SECRET }),
    });
  /** Milliseconds until `g` refuses `token` (asked every 5 ms), or Infinity after 3 s. */
  const msUntilRefused = async (g: RunningGateway, token: string, since: number) => {
    while (performance.now() - since < 3000) {
      if ((await status(g, token)) === 401) return performance.now() - since;
      await new Promise((r) => setTimeout(r, 5));
    }
    return Number.POSITIVE_INFINITY;
  };

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    idp = await startIdp({ audience: AUDIENCE, apps: [CRM_APP], keys: [await signingKey('k1')] });
    redis = await startOwnRedis();
    const path = join(mkdtempSync(join(tmpdir(), 'federated-revocation-')), 'clients.json');
    writeFileSync(
      path,
      JSON.stringify({
        issuers: [{ issuer: idp.issuer, audience: AUDIENCE }],
        clients: [
          { id: 'crm', identities: [{ issuer: idp.issuer, subject: CRM_APP.id }] },
          { id: 'ops', secrets: [{ hash: `sha256:${await sha256Hex(OPS_SECRET)}` }], admin: true },
        ],
      }),
    );
    const env = {
      REDIS_URL: redis.url,
      REDIS_KEY_PREFIX: `federated-${crypto.randomUUID()}`,
      REDIS_TIMEOUT_MS: '2000',
      CLIENT_RATE_PER_MINUTE: '1000000',
    };
    [a, b] = (await startFileGateways(2, simulator.url, path, { env })).gateways as [RunningGateway, RunningGateway];
  });
  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((g) => g.close({ timeoutMs: 1000 })));
    await idp?.stop();
    await redis?.stop();
    await simulator?.close();
  });

  it('refuses a token revoked on A on B within 1 s, p99 over 50 revocations, and introspects it under its client', async () => {
    const delays: number[] = [];
    for (let i = 0; i < 50; i++) {
      const token = await idp.token(CRM_APP);
      expect(await status(b, token)).toBe(200);
      if (i === 0)
        expect(await (await asOps(a, '/oauth2/introspect', token)).json()).toMatchObject({
          active: true,
          client_id: 'crm',
        });
      const since = performance.now();
      expect((await asOps(a, '/oauth2/revoke', token)).status).toBe(200);
      delays.push(await msUntilRefused(b, token, since));
      if (i === 0) expect(await (await asOps(b, '/oauth2/introspect', token)).json()).toEqual({ active: false });
    }
    delays.sort((x, y) => x - y);
    expect(delays[Math.ceil(delays.length * 0.99) - 1]).toBeLessThan(1000);
  });

  it("cuts the client's tokens issued up to a revoke-client on both replicas; one issued after passes", async () => {
    const before = await idp.token(CRM_APP);
    expect(await status(b, before)).toBe(200);
    const login = await fetch(`${a.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'ops', client_secret: OPS_SECRET }),
    });
    const { access_token: ops } = (await login.json()) as { access_token: string };
    const res = await fetch(`${a.url}/admin/tokens/revoke-client`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ops}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'crm' }),
    });
    expect(res.status).toBe(200);
    expect(await msUntilRefused(b, before, performance.now())).toBeLessThan(1000);
    // The provider's iat counts whole seconds: a token of the cut's second is cut with it.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await status(b, await idp.token(CRM_APP))).toBe(200);
  });
});
