// Access tokens of an identity provider on Node over real sockets: panva's oidc-provider (a real, OpenID Certified
// provider) issues JWT access tokens for the gateway's audience with the client credentials grant; two gateways reading
// one clients file answer a mapped app's search 200 counted under its client, refuse an unmapped app, follow a key
// rotation without a restart, keep answering with the keys they hold while the provider is down, and refuse each
// hostile token of the list with 401 invalid_token, no 5xx and no fetch of the keys beyond once per 30 s. Their
// revocation across replicas: federated-revocation.test.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportSPKI, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import type { RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { sampleOf } from '../helpers/metric-sample.js';
import { signingKey, startIdp, type RunningIdp } from '../helpers/oidc-idp.mjs';
import { startFileGateways, UPSTREAM_CLIENTS, type CapturedLog } from '../helpers/stack.js';

const AUDIENCE = 'https://callerid.example.test';
const CRM_APP = { id: 'crm-app', secret: 'crm-app-secret-0123456789' };
const STRAY_APP = { id: 'stray-app', secret: 'stray-app-secret-0123456789' };
const OPS_APP = { id: 'ops-app', secret: 'ops-app-secret-0123456789' };
const OPS_SECRET = 'ops-file-secret-0123';
const SEARCH = '/v2/contacts/search?what=%2B442079460001';

/** Issuers that misbehave: a 10 MB key set, 10,000 keys, discovery naming another issuer, no answer at all. */
function startHostileIdps(): Promise<{ server: Server; url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    hits.push(url);
    if (url.startsWith('/silent')) return; // never answers
    if (url === '/huge/jwks') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      res.write('{"keys":[],"pad":"');
      for (let i = 0; i < 160; i++) res.write(chunk);
      return void res.end('"}');
    }
    if (url === '/many/jwks') {
      const keys = Array.from({ length: 10_000 }, (_, i) => ({ kty: 'oct', kid: String(i) }));
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ keys }));
    }
    if (url === '/liar/.well-known/openid-configuration') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ issuer: 'https://another.example', jwks_uri: `${base}/liar/jwks` }));
    }
    res.writeHead(404).end();
  });
  let base = '';
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      resolve({ server, url: base, hits });
    }),
  );
}

describe('access tokens of a trusted identity provider', () => {
  let simulator: SimulatorServer;
  let idp: RunningIdp;
  let hostile: Awaited<ReturnType<typeof startHostileIdps>>;
  let gateways: RunningGateway[];
  let logs: CapturedLog[][];
  let k1: JWK;
  let attacker: CryptoKey;
  /** What both gateways' clocks are ahead of the real one: how the tests pass the 30 s refetch bound. */
  let offset = 0;
  const now = () => Date.now() + offset;
  const jwksFetches = () => idp.requests.filter((r) => r.startsWith('/jwks')).length;

  const search = async (g: RunningGateway, token: string) => {
    const res = await fetch(`${g.url}${SEARCH}`, { headers: { authorization: `Bearer ${token}` } });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      challenge: res.headers.get('www-authenticate'),
      body: await res.text(),
    };
  };

  /** A token with the provider's claims for crm-app, signed by `key` with `header`. */
  const forged = async (
    key: CryptoKey | Uint8Array,
    header: Record<string, unknown>,
    claims: Record<string, unknown> = {},
    crit?: Record<string, boolean>,
  ) =>
    new SignJWT({ client_id: CRM_APP.id, scope: 'search', ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', ...header } as { alg: string })
      .setIssuer((claims.iss as string | undefined) ?? idp.issuer)
      .setAudience((claims.aud as string | undefined) ?? AUDIENCE)
      .setIssuedAt(Math.floor(now() / 1000))
      .setExpirationTime((claims.exp as number | undefined) ?? Math.floor(now() / 1000) + 300)
      .sign(key, crit && { crit });

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    k1 = await signingKey('k1');
    attacker = (await generateKeyPair('ES256')).privateKey;
    idp = await startIdp({ audience: AUDIENCE, apps: [CRM_APP, STRAY_APP, OPS_APP], keys: [k1] });
    hostile = await startHostileIdps();
    const dir = mkdtempSync(join(tmpdir(), 'federated-'));
    const path = join(dir, 'clients.json');
    const hostileIssuers = ['huge', 'many', 'liar', 'silent'].map((name) => `${hostile.url}/${name}`);
    writeFileSync(
      path,
      JSON.stringify({
        issuers: [
          { issuer: idp.issuer, audience: AUDIENCE, algorithms: ['ES256'] },
          { issuer: hostileIssuers[0], audience: AUDIENCE, jwks_uri: `${hostile.url}/huge/jwks` },
          { issuer: hostileIssuers[1], audience: AUDIENCE, jwks_uri: `${hostile.url}/many/jwks` },
          { issuer: hostileIssuers[2], audience: AUDIENCE },
          { issuer: hostileIssuers[3], audience: AUDIENCE },
        ],
        clients: [
          {
            id: 'crm',
            identities: [
              { issuer: idp.issuer, subject: CRM_APP.id },
              ...hostileIssuers.map((issuer) => ({ issuer, subject: CRM_APP.id })),
            ],
          },
          {
            id: 'ops',
            secrets: [{ hash: `sha256:${await sha256Hex(OPS_SECRET)}` }],
            identities: [{ issuer: idp.issuer, subject: OPS_APP.id }],
            admin: true,
          },
        ],
      }),
    );
    ({ gateways, logs } = await startFileGateways(2, simulator.url, path, { gateway: { clock: now } }));
  });
  afterAll(async () => {
    await Promise.all((gateways ?? []).map((g) => g.close({ timeoutMs: 1000 })));
    await idp?.stop();
    hostile?.server.closeAllConnections();
    hostile?.server.close();
    await simulator?.close();
  });

  it("answers a mapped app's search 200 on both gateways, counted and logged under its client", async () => {
    const token = await idp.token(CRM_APP);
    for (const g of gateways) expect((await search(g, token)).status).toBe(200);
    const metrics = await (await fetch(`${gateways[0]!.url}/metrics`)).text();
    expect(sampleOf(metrics, 'callerid_gateway_client_searches_total{client="crm",result="miss"}')).toBe(1);
    expect(sampleOf(metrics, 'callerid_gateway_idp_fetches_total{issuer="0",document="jwks",outcome="ok"}')).toBe(1);
    const records = logs[0]!.filter((l) => l.fields.route === '/v2/contacts/search');
    expect(records.at(-1)?.fields).toMatchObject({ status: 200, clientId: 'crm' });
    // One discovery and one key set per gateway, whatever the number of searches.
    expect(jwksFetches()).toBe(2);
  });

  it('refuses an unmapped app with 401 invalid_token naming no client', async () => {
    const answer = await search(gateways[0]!, await idp.token(STRAY_APP));
    expect(answer.status).toBe(401);
    expect(answer.type).toContain('application/problem+json');
    expect(answer.challenge).toContain('error="invalid_token"');
    expect(answer.body).not.toContain('stray-app');
    expect(answer.body).not.toContain('crm');
  });

  /** A gateway token of `ops`, from its secret. */
  const ownToken = async (g: RunningGateway) => {
    const res = await fetch(`${g.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'ops', client_secret: OPS_SECRET }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  };

  it("keeps the gateway's own tokens working beside them", async () => {
    expect((await search(gateways[0]!, await ownToken(gateways[0]!))).status).toBe(200);
  });

  it("applies the mapped client's admin flag on the admin routes", async () => {
    const usage = (token: string) =>
      fetch(`${gateways[0]!.url}/admin/usage`, { headers: { authorization: `Bearer ${token}` } });
    expect((await usage(await idp.token(OPS_APP))).status).toBe(200);
    expect((await usage(await idp.token(CRM_APP))).status).toBe(403);
  });

  it('refuses each hostile token with 401 invalid_token, no 5xx, and no fetch of the keys beyond the bound', async () => {
    const secs = Math.floor(now() / 1000);
    const k1Private = (await importJWK(k1, 'ES256')) as CryptoKey;
    const publicPem = await exportSPKI((await importJWK({ ...k1, d: undefined }, 'ES256')) as CryptoKey);
    const { publicKey: attackerPublic } = await generateKeyPair('ES256', { extractable: true });
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const hostileTokens: Record<string, string> = {
      'alg none': `${b64({ alg: 'none', typ: 'at+jwt', kid: 'k1' })}.${b64({ iss: idp.issuer, aud: AUDIENCE, client_id: CRM_APP.id, iat: secs, exp: secs + 300 })}.`,
      'HS256 with the public key': await new SignJWT({ client_id: CRM_APP.id })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: 'k1' })
        .setIssuer(idp.issuer)
        .setAudience(AUDIENCE)
        .setIssuedAt(secs)
        .setExpirationTime(secs + 300)
        .sign(new TextEncoder().encode(publicPem)),
      'a key in its own header': await forged(attacker, {
        kid: 'k1',
        jwk: await import('jose').then((j) => j.exportJWK(attackerPublic)),
      }),
      'an untrusted iss': await forged(attacker, { kid: 'k1' }, { iss: 'https://idp.evil.example' }),
      'a wrong aud': await forged(k1Private, { kid: 'k1' }, { aud: 'https://another-api.example' }),
      expired: await forged(k1Private, { kid: 'k1' }, { exp: secs - 120 }),
      'nbf in the future': await forged(k1Private, { kid: 'k1' }, { nbf: secs + 600 }),
      'an unknown crit': await forged(
        k1Private,
        { kid: 'k1', crit: ['urn:example:must-know'], 'urn:example:must-know': 1 },
        {},
        { 'urn:example:must-know': true },
      ),
      'over 8 KiB': await forged(k1Private, { kid: 'k1' }, { pad: 'p'.repeat(8 * 1024) }),
    };
    const before = jwksFetches();
    const linesBefore = logs[0]!.length;
    for (const [name, token] of Object.entries(hostileTokens)) {
      const answer = await search(gateways[0]!, token);
      expect([name, answer.status, answer.challenge]).toEqual([name, 401, expect.stringContaining('invalid_token')]);
      expect(answer.type, name).toContain('application/problem+json');
    }
    // One line each: the request's own, with its 401.
    await new Promise((r) => setTimeout(r, 100));
    const lines = logs[0]!.slice(linesBefore);
    expect(lines.map((l) => [l.fields.route, l.fields.status])).toEqual(
      Object.keys(hostileTokens).map(() => ['/v2/contacts/search', 401]),
    );
    // 1,000 tokens with random key ids: at most one fetch of the provider's keys within 30 s.
    const statuses = new Map<number, number>();
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from(
          { length: 50 },
          async () => (await search(gateways[0]!, await forged(attacker, { kid: crypto.randomUUID() }))).status,
        ),
      );
      for (const s of answers) statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
    expect([...statuses]).toEqual([[401, 1000]]);
    expect(jwksFetches() - before).toBeLessThanOrEqual(1);
  });

  it('refuses tokens of issuers whose documents are oversized, lie about the issuer or never come, fetching each once', async () => {
    const tokens = ['huge', 'many', 'liar', 'silent'].map((name) =>
      forged(attacker, { kid: 'a' }, { iss: `${hostile.url}/${name}` }),
    );
    const started = performance.now();
    const answers = await Promise.all(
      (await Promise.all([...tokens, ...tokens])).map(async (t) => (await search(gateways[1]!, t)).status),
    );
    expect(answers).toEqual(Array(8).fill(401));
    // The silent one is given up after the fetch timeout (5 s), not held on to.
    expect(performance.now() - started).toBeLessThan(7000);
    const metrics = await (await fetch(`${gateways[1]!.url}/metrics`)).text();
    const fetched = (issuer: number, document: string, outcome: string) =>
      sampleOf(
        metrics,
        `callerid_gateway_idp_fetches_total{issuer="${issuer}",document="${document}",outcome="${outcome}"}`,
      );
    expect(fetched(1, 'jwks', 'too_large')).toBe(1);
    expect(fetched(2, 'jwks', 'too_large')).toBe(1);
    expect(fetched(3, 'discovery', 'wrong_issuer')).toBe(1);
    expect(fetched(4, 'discovery', 'timeout')).toBe(1);
    expect(hostile.hits.filter((h) => h.startsWith('/liar/jwks'))).toEqual([]);
    for (const name of ['huge', 'many', 'liar', 'silent'])
      expect(
        hostile.hits.filter((h) => h.startsWith(`/${name}/`)),
        name,
      ).toHaveLength(1);
  });

  it('takes a rotated key within 30 s without a restart, and keeps the held keys while the provider is down', async () => {
    const k2 = await signingKey('k2');
    idp.rotate([k2, k1]);
    const rotated = await idp.token(CRM_APP);
    // Both gateways fetched the keys less than 30 s ago: the new key id waits for the bound, then is taken.
    offset += 30_001;
    for (const g of gateways) expect((await search(g, rotated)).status).toBe(200);

    await idp.stop();
    offset += 30_001;
    const unknownKey = await forged((await generateKeyPair('ES256')).privateKey, { kid: 'k3' });
    const statuses = [];
    for (const g of gateways) {
      statuses.push((await search(g, rotated)).status, (await search(g, unknownKey)).status);
      statuses.push((await search(g, await forged((await importJWK(k2, 'ES256')) as CryptoKey, { kid: 'k2' }))).status);
    }
    expect(statuses).toEqual([200, 401, 200, 200, 401, 200]);
    // The gateway's own tokens are unaffected.
    for (const g of gateways) expect((await search(g, await ownToken(g))).status).toBe(200);
    const failed = logs.flat().filter((l) => l.fields.event === 'idp_fetch' && l.fields.outcome !== 'ok');
    expect(failed.length).toBeGreaterThan(0);
  });
});
