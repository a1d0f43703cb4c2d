// The console's traversal guard in the Worker build as workerd itself serves it (`workerd serve`, no wrangler proxy in
// front): the bundle `wrangler deploy --dry-run` makes, run with text bindings, asked over raw sockets. workerd keeps
// a percent-encoded dot segment in request.url, so the Worker sees the target as sent and refuses it; a literal dot
// segment is resolved by workerd before any Worker code runs (docs/security.md says what that means for a proxy).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../helpers/free-port.js';
import { rawRequest } from '../../../helpers/raw-http.js';
import { wranglerPresent } from '../../../helpers/wrangler-dev.js';

const run = promisify(execFile);
const WORKERD = 'node_modules/workerd/bin/workerd';

const BINDINGS: Record<string, string> = {
  // Nothing listens on port 9: the token endpoint is unreachable, which these requests never need.
  UPSTREAM_AUTH_URL: 'http://127.0.0.1:9',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
  UPSTREAM_CLIENT_ID: 'workerd-serve-gw',
  UPSTREAM_CLIENT_SECRET: 'workerd-serve-upstream-secret',
  GATEWAY_TOKEN_SECRET: 'workerd-serve-signing-key-0123456789abcdef',
  GATEWAY_CLIENTS: 'crm:caf08aef5775ac931b2b5091f345430474ee3422196097fe1312702c3068109e',
  DEFAULT_REGION: 'GB',
  CONSOLE_PROVIDER: 'swissdir',
  LOG_LEVEL: 'silent',
};

function capnpConfig(port: number): string {
  const bindings = Object.entries(BINDINGS)
    .map(([name, value]) => `    (name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)}),`)
    .join('\n');
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .gateway), (name = "loopback", network = (allow = ["local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const gateway :Workerd.Worker = (
  modules = [ (name = "main.js", esModule = embed "main.js") ],
  compatibilityDate = "2026-04-01",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [
${bindings}
  ],
  globalOutbound = "loopback",
);
`;
}

describe.skipIf(!wranglerPresent())('Worker build under workerd serve: the console traversal guard', () => {
  let dir: string;
  let workerd: ChildProcess | undefined;
  let base: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'callerid-workerd-'));
    await run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', dir], {
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      timeout: 120_000,
    });
    const port = await freePort();
    await writeFile(join(dir, 'gateway.capnp'), capnpConfig(port));
    workerd = spawn(join(process.cwd(), WORKERD), ['serve', 'gateway.capnp'], { cwd: dir, stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        if ((await rawRequest(base, 'GET /healthz HTTP/1.1\r\nHost: x', 1000)).status === 200) break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }, 150_000);

  afterAll(async () => {
    workerd?.kill('SIGTERM');
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each(['/console/%2E%2E/healthz', '/console/%2e%2e/readyz', '/console/..%2fhealthz', '/console%2f..%2fhealthz'])(
    'refuses GET %s with 404 problem+json: the encoded traversal never reaches the route behind it',
    async (target) => {
      const res = await rawRequest(base, `GET ${target} HTTP/1.1\r\nHost: x`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.body).not.toContain('"status":"ok"');
    },
  );

  it('receives a literal dot segment already resolved by workerd: /console/./../healthz arrives as /healthz', async () => {
    const traversal = await rawRequest(base, 'GET /console/./../healthz HTTP/1.1\r\nHost: x');
    const direct = await rawRequest(base, 'GET /healthz HTTP/1.1\r\nHost: x');
    expect(direct.status).toBe(200);
    expect(traversal.status).toBe(direct.status);
    expect(traversal.body).toBe(direct.body);
  });
});
