// The container's production start path without a Docker engine: the Dockerfile's own steps run in a
// temporary directory (build → `npm ci --omit=dev` → its CMD), which then holds what the image holds: the
// production dependency set alone and dist/. A login and a search go through it, in demo mode and in front of an
// upstream, and the image's HEALTHCHECK command runs against it.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { buildDist, REPO, startGatewayProcess, type BuiltDist, type GatewayProcess } from './build-dist.js';
import { parseConfig } from '../../src/config/config.js';
import { freePort } from '../helpers/free-port.js';
import { loginAt } from '../helpers/stack.js';

const run = promisify(execFile);
const CLIENT_SECRET = 'container-client-secret-0123';

interface DockerSteps {
  stages: string[];
  /** The final stage's dependency install (`npm ci --omit=dev ...`). */
  installProduction: string[];
  healthcheck: string[];
  entrypoint: string[];
  cmd: string[];
  lines: string[];
}

function readDockerfile(text: string): DockerSteps {
  const lines = text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const json = (prefix: RegExp) => {
    const line = lines.find((l) => prefix.test(l));
    if (!line) throw new Error(`Dockerfile has no ${prefix.source}`);
    return JSON.parse(line.replace(prefix, '')) as string[];
  };
  const install = lines.find((l) => /^RUN npm ci --omit=dev\b/.test(l));
  if (!install) throw new Error('Dockerfile has no RUN npm ci --omit=dev');
  return {
    stages: lines.filter((l) => l.startsWith('FROM ')),
    installProduction: install.replace(/^RUN /, '').split('&&')[0]!.trim().split(/\s+/),
    healthcheck: json(/^HEALTHCHECK .*?CMD /),
    entrypoint: json(/^ENTRYPOINT /),
    cmd: json(/^CMD /),
    lines,
  };
}

/** The image's HEALTHCHECK command against a gateway on `port`, once, within its `--timeout` (3 s): its exit code. */
function healthcheck(port: number): Promise<number> {
  const [command, ...args] = steps.healthcheck;
  return run(command!, args, { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, timeout: 3_000 }).then(
    () => 0,
    (err: { code?: number }) => (typeof err.code === 'number' ? err.code : 1),
  );
}

/**
 * The HEALTHCHECK as Docker reads it: unhealthy only after `--retries=3` failed checks in a row, so a check a busy
 * machine slowed past its 3 s does not decide alone. 0 once one passes; else the last exit code.
 */
async function healthOf(port: number): Promise<number> {
  let code = 1;
  for (let attempt = 0; attempt < 3 && code !== 0; attempt++) code = await healthcheck(port);
  return code;
}

let steps: DockerSteps;

describe('container production start path', () => {
  let built: BuiltDist;
  let simulator: SimulatorServer;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    steps = readDockerfile(await readFile(join(REPO, 'Dockerfile'), 'utf8'));
    built = await buildDist('callerid-container-');
    await copyFile(join(REPO, 'package.json'), join(built.dir, 'package.json'));
    await copyFile(join(REPO, 'package-lock.json'), join(built.dir, 'package-lock.json'));
    const [npm, ...args] = steps.installProduction;
    // From the local npm cache when it holds the packages, as a build cache would.
    await run(npm!, [...args, '--prefer-offline', '--loglevel=error'], { cwd: built.dir, timeout: 180_000 });
    simulator = await startSimulatorServer({ clients: { 'gateway-ct': 'upstream-secret-ct' } });
  }, 240_000);

  afterAll(async () => {
    if (gateway && gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
    await simulator?.close();
    await built?.cleanup();
  });

  it('is a multi-stage build on node:24-slim that runs as a non-root user with a health check and no secrets', () => {
    expect(steps.stages.length).toBeGreaterThanOrEqual(2);
    // Every stage from the one argument: the tag, or the tag pinned by a digest (64 hex digits, never a stand-in).
    const image = steps.lines.find((l) => l.startsWith('ARG NODE_IMAGE='));
    expect(image).toMatch(/^ARG NODE_IMAGE=node:24-slim(@sha256:[0-9a-f]{64})?$/);
    for (const stage of steps.stages) expect(stage).toMatch(/^FROM \$\{NODE_IMAGE\}( AS \w+)?$/);
    expect(steps.lines).toContain('RUN npm run build');
    expect(steps.lines.filter((l) => l.startsWith('USER ')).at(-1)).toMatch(/^USER (?!root\b|0\b)\S+/);
    expect(steps.cmd).toEqual(['node', 'dist/runtime/node/main.js']);
    for (const line of steps.lines.filter((l) => /^(ENV|ARG) /.test(l)))
      expect(line).not.toMatch(/SECRET|TOKEN|PASSWORD|CLIENTS|KEY/i);
  });

  it('says how to pin the base image by digest', async () => {
    const text = await readFile(join(REPO, 'Dockerfile'), 'utf8');
    expect(text).toContain('docker buildx imagetools inspect node:24-slim');
    expect(text).toContain('--build-arg NODE_IMAGE=node:24-slim@sha256:');
  });

  it('runs tini as PID 1, exposes the API and the metrics port, and checks health without starting Node', () => {
    expect(steps.lines.some((l) => /^RUN apt-get update\s+&& .*apt-get install .*\btini\b/.test(l))).toBe(true);
    expect(steps.entrypoint).toEqual(['/usr/bin/tini', '--']);
    const env = steps.lines.filter((l) => l.startsWith('ENV ')).join(' ');
    const metricsPort = /\bMETRICS_PORT=(\d+)/.exec(env)?.[1];
    expect(Number(metricsPort)).toBe(parseConfig({}).metrics.port);
    expect(steps.lines).toContain(`EXPOSE 8080 ${metricsPort}`);
    expect(steps.healthcheck[0]).not.toBe('node');
    expect(steps.healthcheck.join(' ')).not.toMatch(/\bnode\b/);
  });

  it('installs production dependencies only', () => {
    expect(existsSync(join(built.dir, 'node_modules', 'hono'))).toBe(true);
    expect(existsSync(join(built.dir, 'node_modules', 'prom-client'))).toBe(true);
    for (const dev of ['vitest', 'typescript', 'wrangler', '@types/node'])
      expect(existsSync(join(built.dir, 'node_modules', dev)), dev).toBe(false);
  });

  it('starts with NODE_ENV=production against a real upstream, logs a client in and answers a search; the HEALTHCHECK passes', async () => {
    const [node, ...cmdArgs] = steps.cmd;
    expect(node).toBe('node');
    expect(cmdArgs).toEqual(['dist/runtime/node/main.js']);
    const metricsPort = await freePort();
    gateway = await startGatewayProcess(built.dir, {
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_AUTH_URL: simulator.url,
      UPSTREAM_BASE_URL: simulator.url,
      UPSTREAM_CLIENT_ID: 'gateway-ct',
      UPSTREAM_CLIENT_SECRET: 'upstream-secret-ct',
      GATEWAY_TOKEN_SECRET: 'container-test-signing-key-of-32-bytes!',
      GATEWAY_CLIENTS: `crm:${await sha256Hex(CLIENT_SECRET)}`,
      DEFAULT_REGION: 'GB',
      PUBLIC_BASE_URL: 'https://callerid.example.com',
      METRICS_PORT: String(metricsPort),
    });
    const base = `http://127.0.0.1:${gateway.port}`;
    const token = await loginAt(base, 'crm', CLIENT_SECRET);
    const search = await fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0001')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(search.status).toBe(200);
    expect(((await search.json()) as { total: number }).total).toBeGreaterThan(0);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()).toContain(
      'process_cpu_user_seconds_total',
    );
    expect((await fetch(`${base}/metrics`)).status).toBe(404);

    expect(await healthOf(gateway.port)).toBe(0);
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    // The check can fail: nothing listens on the port any more.
    expect(await healthOf(gateway.port)).not.toBe(0);
  });

  it('starts in demo mode from the production dependencies alone and answers the login and search it prints', async () => {
    const metricsPort = await freePort();
    const demo = await startGatewayProcess(built.dir, {
      PORT: '0',
      HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
    });
    try {
      const printed = async (label: string): Promise<string> => {
        const deadline = Date.now() + 10_000;
        for (;;) {
          const text = demo.lines.map((l) => (typeof l.text === 'string' ? l.text : '')).join('\n');
          const value = new RegExp(`^\\s*${label}:\\s+(\\S+)$`, 'm').exec(text)?.[1];
          if (value !== undefined) return value;
          if (Date.now() > deadline) throw new Error(`no "${label}:" line in ${text}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const base = `http://127.0.0.1:${demo.port}`;
      const token = await loginAt(base, await printed('demo client id'), await printed('demo client secret'));
      const search = await fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0001')}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(search.status).toBe(200);
      expect(((await search.json()) as { total: number }).total).toBeGreaterThan(0);
      // Where a newcomer finds the metrics: printed, and answering there.
      const metricsUrl = await printed('metrics');
      expect(metricsUrl).toBe(`http://localhost:${metricsPort}/metrics`);
      const metrics = await fetch(metricsUrl.replace('localhost', '127.0.0.1'));
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('callerid_gateway_http_requests_total');
      expect(demo.stderr()).toBe('');
    } finally {
      demo.child.kill('SIGTERM');
      expect(await demo.exited).toBe(0);
    }
  });

  it('refuses demo mode under NODE_ENV=production with one clear line', async () => {
    const child = spawn(process.execPath, steps.cmd.slice(1), {
      cwd: built.dir,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(
      /^configuration error: UPSTREAM_AUTH_URL: demo mode is refused when NODE_ENV=production/,
    );
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });
});
