// The Worker build in real workerd (wrangler dev on loopback) against the simulator over real HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/runtime/simulator-server.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';

const wrangler = fileRequirement('node_modules/.bin/wrangler', 'wrangler (npm ci installs it) with its workerd binary');
const run = checkRequirement(wrangler);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe.skipIf(!run)('Worker build in workerd', () => {
  let simulator: SimulatorServer;
  let worker: ChildProcess;
  let base: string;
  let output = '';

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: { 'worker-gw': 'worker-upstream-secret' } });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const vars: Record<string, string> = {
      UPSTREAM_AUTH_URL: simulator.url,
      UPSTREAM_BASE_URL: simulator.url,
      UPSTREAM_CLIENT_ID: 'worker-gw',
      UPSTREAM_CLIENT_SECRET: 'worker-upstream-secret',
      GATEWAY_TOKEN_SECRET: 'worker-test-signing-key-0123456789abcdef',
      GATEWAY_CLIENTS: `crm:${await sha256Hex('crm-worker-secret')}`,
      DEFAULT_REGION: 'GB',
    };
    const args = ['wrangler', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0', '--show-interactive-dev-session=false', '--log-level', 'info'];
    for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
    worker = spawn('npx', args, {
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    worker.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    worker.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    while (!/Ready on/.test(output)) {
      if (worker.exitCode !== null) throw new Error(`wrangler dev exited: ${output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`wrangler dev did not start: ${output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 120_000);

  afterAll(async () => {
    if (worker?.pid) {
      try {
        process.kill(-worker.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await simulator?.close();
  });

  it('logs in and answers a search end to end', async () => {
    const login = await fetch(`${base}/token/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'crm', client_secret: 'crm-worker-secret' }),
    });
    expect(login.status).toBe(200);
    const { access_token, expires_in } = (await login.json()) as { access_token: string; expires_in: string };
    expect(expires_in).toBe('90000');

    const res = await fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0001')}`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { query: { what: string }; total: number };
    expect(body.query.what).toBe('+442079460001');
    expect(body.total).toBe(2);
    expect(simulator.controls.stats().authorizationsSeen.some((a) => a.includes(access_token))).toBe(false);
  });

  it('refuses an impossible number with 400 problem+json and no upstream call', async () => {
    const login = await fetch(`${base}/token/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'crm', client_secret: 'crm-worker-secret' }),
    });
    const { access_token } = (await login.json()) as { access_token: string };
    const before = simulator.controls.stats().searchCalls;
    const res = await fetch(`${base}/v2/contacts/search?what=abc`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(simulator.controls.stats().searchCalls).toBe(before);
  });
});
