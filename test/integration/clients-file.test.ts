// The clients file on Node over real sockets (GATEWAY_CLIENTS_FILE): two gateways watching one file take a client
// added within 2 s and refuse a removed one (its tokens too) within 2 s, without a restart; a wrong file on reload
// leaves the last good clients, logged and counted; two secrets work during a rotation and the retired one stops at
// its not_after; a client's own token lifetime and rate; a wrong file or a second source of clients stops the start in one
// line.
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { ConfigError } from '../../src/config/config.js';
import { startNodeGateway, type RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { awayFromMinuteEnd } from '../helpers/minute-window.js';
import { captureLogger, stackEnv, startFileGateways, UPSTREAM_CLIENTS, type CapturedLog } from '../helpers/stack.js';

const SECRETS = { crm: 'crm-file-secret-0123', pbx: 'pbx-file-secret-0123', ops: 'ops-file-secret-0123' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface FileClient {
  id: string;
  secrets: { hash: string; not_after?: string }[];
  admin?: boolean;
  token_ttl_seconds?: number;
  rate_per_minute?: number;
}

const fileClient = async (id: keyof typeof SECRETS, extra: Partial<FileClient> = {}): Promise<FileClient> => ({
  id,
  secrets: [{ hash: `sha256:${await sha256Hex(SECRETS[id])}` }],
  ...extra,
});

async function login(
  gateway: RunningGateway,
  id: string,
  secret: string,
): Promise<{ status: number; body: { access_token: string; expires_in: number } }> {
  const res = await fetch(`${gateway.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
  });
  return { status: res.status, body: (await res.json()) as { access_token: string; expires_in: number } };
}

async function searchStatus(gateway: RunningGateway, token: string): Promise<number> {
  const res = await fetch(`${gateway.url}/v2/contacts/search?what=%2B442079460001`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return res.status;
}

/** Milliseconds until `check` holds (asked every 20 ms), or Infinity after 5 s. */
async function msUntil(check: () => Promise<boolean>): Promise<number> {
  const since = performance.now();
  while (performance.now() - since < 5000) {
    if (await check()) return performance.now() - since;
    await sleep(20);
  }
  return Number.POSITIVE_INFINITY;
}

describe('the clients file, watched', () => {
  let simulator: SimulatorServer;
  let dir: string;
  let path: string;
  let gateways: RunningGateway[];
  let logs: CapturedLog[][];
  /** Writes the file as a Secret mount or an editor does: a new file renamed over the old one. */
  const writeClients = (doc: unknown) => {
    const next = join(dir, `.next-${Math.random()}`);
    writeFileSync(next, typeof doc === 'string' ? doc : JSON.stringify({ clients: doc }));
    renameSync(next, path);
  };

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    dir = mkdtempSync(join(tmpdir(), 'clients-file-'));
    path = join(dir, 'clients.json');
    writeClients([await fileClient('crm', { token_ttl_seconds: 600 }), await fileClient('ops', { admin: true })]);
    // The tests poll logins until a change applies: failures before it must not reach the throttle.
    const throttle = { LOGIN_FAILURES_PER_CLIENT: '10000', LOGIN_FAILURES_PER_ADDRESS: '100000' };
    ({ gateways, logs } = await startFileGateways(2, simulator.url, path, { env: throttle }));
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close({ timeoutMs: 1000 })));
    await simulator?.close();
  });

  it("issues tokens with the client's own lifetime, admin rights from the file", async () => {
    const crm = await login(gateways[0]!, 'crm', SECRETS.crm);
    expect(crm).toMatchObject({ status: 200, body: { expires_in: 600 } });
    const ops = await login(gateways[0]!, 'ops', SECRETS.ops);
    expect(ops.body.expires_in).toBe(90000);
    const usage = await fetch(`${gateways[0]!.url}/admin/usage`, {
      headers: { authorization: `Bearer ${ops.body.access_token}` },
    });
    expect(usage.status).toBe(200);
    const refused = await fetch(`${gateways[0]!.url}/admin/usage`, {
      headers: { authorization: `Bearer ${crm.body.access_token}` },
    });
    expect(refused.status).toBe(403);
  });

  it('lets an added client log in within 2 s and refuses a removed one, and its tokens, within 2 s, on both', async () => {
    const crmTokens = await Promise.all(
      gateways.map(async (g) => (await login(g, 'crm', SECRETS.crm)).body.access_token),
    );
    expect((await login(gateways[1]!, 'pbx', SECRETS.pbx)).status).toBe(400);
    writeClients([await fileClient('pbx'), await fileClient('ops', { admin: true })]);
    for (const [i, g] of gateways.entries()) {
      expect(await msUntil(async () => (await login(g, 'pbx', SECRETS.pbx)).status === 200)).toBeLessThan(2000);
      expect(await msUntil(async () => (await searchStatus(g, crmTokens[i]!)) === 401)).toBeLessThan(2000);
      expect((await login(g, 'crm', SECRETS.crm)).status).toBe(400);
      // The usage report lists the clients of the file as it now reads.
      const ops = (await login(g, 'ops', SECRETS.ops)).body.access_token;
      const usage = (await (
        await fetch(`${g.url}/admin/usage`, { headers: { authorization: `Bearer ${ops}` } })
      ).json()) as { clients: { id: string }[] };
      expect(usage.clients.map((c) => c.id).sort()).toEqual(['console', 'ops', 'pbx']);
    }
  });

  it('keeps the last good clients when the file reads wrong, logging the field and counting it', async () => {
    writeClients([{ id: 'pbx', secrets: [{ hash: 'sha256:nothex' }] }]);
    const refusals = (i: number) => logs[i]!.filter((l) => l.fields.event === 'clients_reload_refused');
    // Each gateway reads the file once it changes: its refusal is logged then (within 5 s, however loaded the machine).
    for (const i of gateways.keys()) expect(await msUntil(async () => refusals(i).length > 0)).toBeLessThan(5000);
    for (const [i, g] of gateways.entries()) {
      expect((await login(g, 'pbx', SECRETS.pbx)).status).toBe(200);
      const refused = refusals(i);
      expect(refused.at(-1)?.fields.problem).toBe(
        'GATEWAY_CLIENTS_FILE: clients[0].secrets[0].hash: must be sha256:<64 lowercase hex digits> (at line 1, column 44)',
      );
      const metrics = await (await fetch(`${g.url}/metrics`)).text();
      expect(metrics).toMatch(/^callerid_gateway_clients_reloads_total\{result="refused"\} [1-9]/m);
    }
  });

  it('accepts both secrets during a rotation; the retired one stops at its not_after', async () => {
    const retiresAt = new Date(Date.now() + 1500).toISOString();
    writeClients([
      {
        id: 'pbx',
        secrets: [
          { hash: `sha256:${await sha256Hex(SECRETS.pbx)}`, not_after: retiresAt },
          { hash: `sha256:${await sha256Hex('pbx-rotated-secret-456')}` },
        ],
      },
    ]);
    const g = gateways[0]!;
    expect(await msUntil(async () => (await login(g, 'pbx', 'pbx-rotated-secret-456')).status === 200)).toBeLessThan(
      2000,
    );
    expect((await login(g, 'pbx', SECRETS.pbx)).status).toBe(200);
    await sleep(Math.max(0, Date.parse(retiresAt) - Date.now()) + 50);
    expect((await login(g, 'pbx', SECRETS.pbx)).status).toBe(400);
    expect((await login(g, 'pbx', 'pbx-rotated-secret-456')).status).toBe(200);
  });
});

describe('the clients file at start', () => {
  const startWith = async (extra: Record<string, string>) => {
    const { GATEWAY_CLIENTS: _, GATEWAY_ADMIN_CLIENTS: __, ...env } = await stackEnv('http://127.0.0.1:9');
    return startNodeGateway({ ...env, ...extra }, { logger: captureLogger() }).then(
      async (g) => {
        await g.close({ timeoutMs: 100 });
        return undefined;
      },
      (err: unknown) => err,
    );
  };

  it('refuses a wrong file, or a second source of clients beside it, with one line naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clients-file-'));
    const path = join(dir, 'clients.json');
    writeFileSync(path, JSON.stringify({ clients: [{ id: 'crm', secrets: [{ hash: 'sha256:abc' }] }] }));
    const wrong = await startWith({ GATEWAY_CLIENTS_FILE: path });
    expect(wrong).toBeInstanceOf(ConfigError);
    expect((wrong as Error).message).toBe(
      `configuration error: GATEWAY_CLIENTS_FILE: ${path}: clients[0].secrets[0].hash: must be sha256:<64 lowercase hex digits> (at line 1, column 44)`,
    );
    const both = await startWith({ GATEWAY_CLIENTS_FILE: path, GATEWAY_CLIENTS: `crm:${'a'.repeat(64)}` });
    expect(both).toBeInstanceOf(ConfigError);
    expect((both as Error).message.split('\n')).toHaveLength(1);
    expect((both as Error).message).toMatch(/GATEWAY_CLIENTS: is set beside GATEWAY_CLIENTS_FILE/);
    const missing = await startWith({ GATEWAY_CLIENTS_FILE: join(dir, 'absent.json') });
    expect((missing as Error).message).toMatch(/absent\.json: cannot be read \(ENOENT\)$/);
  });
});

describe("a client's own rate from the clients file", () => {
  let simulator: SimulatorServer;
  let gateway: RunningGateway;
  let dir: string;

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    dir = mkdtempSync(join(tmpdir(), 'clients-rate-'));
    const path = join(dir, 'clients.json');
    const clients = [await fileClient('pbx', { rate_per_minute: 3 }), await fileClient('ops', { admin: true })];
    writeFileSync(path, JSON.stringify({ clients }));
    const { GATEWAY_CLIENTS: _, GATEWAY_ADMIN_CLIENTS: __, ...env } = await stackEnv(simulator.url);
    gateway = await startNodeGateway({ ...env, GATEWAY_CLIENTS_FILE: path }, { logger: captureLogger() });
  });
  afterAll(async () => {
    await gateway?.close({ timeoutMs: 1000 });
    await simulator?.close();
  });

  it('holds that client to its rate and says its own quota, while another keeps CLIENT_RATE_PER_MINUTE', async () => {
    await awayFromMinuteEnd();
    const pbx = (await login(gateway, 'pbx', SECRETS.pbx)).body.access_token;
    const ops = (await login(gateway, 'ops', SECRETS.ops)).body.access_token;
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push(await searchStatus(gateway, pbx));
    expect(statuses).toEqual([200, 200, 200, 429]);
    const res = await fetch(`${gateway.url}/v2/contacts/search?what=%2B442079460001`, {
      headers: { authorization: `Bearer ${pbx}` },
    });
    expect(res.headers.get('ratelimit-policy')).toBe('"client";q=3;w=60');
    const other = await fetch(`${gateway.url}/v2/contacts/search?what=%2B442079460001`, {
      headers: { authorization: `Bearer ${ops}` },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-policy')).toBe('"client";q=600;w=60');
  });
});
