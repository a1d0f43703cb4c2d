// The console in the Worker build (real workerd via wrangler dev): filter, device check and the per-isolate limiter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/runtime/simulator-server.js';
import { consoleSearch, DESKTOP_HEADERS } from '../console/console-client.js';
import { PHONES } from '../console/user-agents.js';
import { startWranglerDev, wranglerPresent, type WranglerDev } from '../helpers/wrangler-dev.js';

const run = wranglerPresent();

describe.skipIf(!run)('console on Workers (memory limiter per isolate)', () => {
  let simulator: SimulatorServer;
  let worker: WranglerDev | undefined;
  let base: string;

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: { 'worker-gw': 'worker-upstream-secret' } });
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
    worker = await startWranglerDev(vars);
    base = worker.url;
  }, 120_000);

  afterAll(async () => {
    worker?.close();
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
