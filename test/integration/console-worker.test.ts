// The console in the Worker build (real workerd via wrangler dev): filter, device check and the per-isolate limiter.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/runtime/simulator-server.js';
import { consoleSearch, DESKTOP_HEADERS } from '../console/console-client.js';
import { PHONES } from '../console/user-agents.js';
import { checkRequirement, fileRequirement } from '../helpers/requires.js';

const run = checkRequirement(fileRequirement('node_modules/.bin/wrangler', 'wrangler (npm ci installs it) with its workerd binary'));

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

describe.skipIf(!run)('console on Workers (memory limiter per isolate)', () => {
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
      CONSOLE_PROVIDER: 'swissdir',
      CONSOLE_RATE_PER_ADDRESS: '2',
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

  it('serves the page, refuses phones, filters to the provider and limits per address', async () => {
    const page = await fetch(`${base}/console`, { headers: DESKTOP_HEADERS });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await consoleSearch(base, '020 7946 0001', { 'user-agent': PHONES.androidChrome })).status).toBe(403);

    const first = await consoleSearch(base, '020 7946 0001');
    expect(first.status).toBe(200);
    const body = (await first.json()) as { total: number; results: { provider: { id: string } }[] };
    expect(body.total).toBe(1);
    expect(body.results.map((r) => r.provider.id)).toEqual(['swissdir']);
    expect((await consoleSearch(base, '020 7946 0001')).status).toBe(200);
    const limited = await consoleSearch(base, '020 7946 0001');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
  });
});
