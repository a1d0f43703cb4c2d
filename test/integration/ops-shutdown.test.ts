// Graceful shutdown of the built entry point (`node dist/runtime/node/main.js`): SIGTERM during a slow upstream
// call lets it finish with 200, refuses new connections, then exits 0; past SHUTDOWN_TIMEOUT_SECONDS it cuts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import {
  buildRunnableDist,
  productionGatewayEnv,
  startGatewayProcess,
  type BuiltDist,
  type GatewayProcess,
} from '../container/build-dist.js';
import { loginAt } from '../helpers/stack.js';

const CLIENT_SECRET = 'shutdown-client-secret-0123';

describe('graceful shutdown of the Node entry point', () => {
  let built: BuiltDist;
  let simulator: SimulatorServer;
  let env: Record<string, string>;
  const running: GatewayProcess[] = [];

  beforeAll(async () => {
    built = await buildRunnableDist('callerid-shutdown-');
    simulator = await startSimulatorServer({ clients: { 'gateway-sd': 'upstream-secret-sd' } });
    env = {
      ...productionGatewayEnv({
        simulatorUrl: simulator.url,
        upstreamClientId: 'gateway-sd',
        upstreamSecret: 'upstream-secret-sd',
        signingKey: 'shutdown-test-signing-key-of-32-bytes!!',
        clients: `crm:${await sha256Hex(CLIENT_SECRET)}`,
      }),
      UPSTREAM_TIMEOUT_MS: '10000',
    };
  }, 120_000);

  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await simulator?.close();
    await built?.cleanup();
  });

  async function start(
    extra: Record<string, string>,
  ): Promise<{ gateway: GatewayProcess; base: string; token: string }> {
    const gateway = await startGatewayProcess(built.dir, { ...env, ...extra });
    running.push(gateway);
    const base = `http://127.0.0.1:${gateway.port}`;
    return { gateway, base, token: await loginAt(base, 'crm', CLIENT_SECRET) };
  }

  async function searchStarted(before: number): Promise<void> {
    while (simulator.controls.stats().searchCalls === before) await new Promise((r) => setTimeout(r, 10));
  }

  it('finishes a slow search in flight with 200 after SIGTERM, refuses new connections, then exits 0', async () => {
    const { gateway, base, token } = await start({ SHUTDOWN_TIMEOUT_SECONDS: '10' });
    simulator.controls.setFaults({ latencyMs: 1500 });
    const before = simulator.controls.stats().searchCalls;
    const inFlight = fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0001')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await searchStarted(before);

    gateway.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();

    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { total: number }).total).toBeGreaterThan(0);
    expect(await gateway.exited).toBe(0);
    const events = gateway.lines.map((l) => l.event);
    expect(events).toContain('shutdown');
    expect(gateway.lines.find((l) => l.event === 'stopped')).toMatchObject({ level: 'info', forced: false });
    expect(gateway.lines.find((l) => l.event === 'request' && l.route === '/v2/contacts/search')).toMatchObject({
      status: 200,
    });
    simulator.controls.setFaults({ latencyMs: 0 });
  });

  it('cuts requests still running at SHUTDOWN_TIMEOUT_SECONDS and still exits 0', async () => {
    const { gateway, base, token } = await start({ SHUTDOWN_TIMEOUT_SECONDS: '1' });
    simulator.controls.setFaults({ latencyMs: 8000 });
    const before = simulator.controls.stats().searchCalls;
    const inFlight = fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0002')}`, {
      headers: { authorization: `Bearer ${token}` },
    }).then(
      (r) => r.status,
      () => 'cut',
    );
    await searchStarted(before);
    const signalled = Date.now();
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(4_000);
    expect(await inFlight).toBe('cut');
    expect(gateway.lines.find((l) => l.event === 'stopped')).toMatchObject({ forced: true });
    simulator.controls.setFaults({ latencyMs: 0 });
  });
});
