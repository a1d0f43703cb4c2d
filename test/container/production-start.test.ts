// The container's production start path without a Docker engine: the Dockerfile's own steps run in a
// temporary directory (build → `npm ci --omit=dev` → its CMD), then a login and a search go through it.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { buildDist, REPO, startGatewayProcess, type BuiltDist, type GatewayProcess } from './build-dist.js';
import { loginAt } from '../helpers/stack.js';

const run = promisify(execFile);
const CLIENT_SECRET = 'container-client-secret-0123';

interface DockerSteps {
  stages: string[];
  /** The final stage's dependency install (`npm ci --omit=dev ...`). */
  installProduction: string[];
  healthcheck: string[];
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
    cmd: json(/^CMD /),
    lines,
  };
}

describe('container production start path', () => {
  let built: BuiltDist;
  let simulator: SimulatorServer;
  let steps: DockerSteps;
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
    expect(steps.lines).toContain('ARG NODE_IMAGE=node:24-slim');
    expect(steps.lines).toContain('RUN npm run build');
    expect(steps.lines.filter((l) => l.startsWith('USER ')).at(-1)).toMatch(/^USER (?!root\b|0\b)\S+/);
    expect(steps.lines).toContain('EXPOSE 8080');
    expect(steps.cmd).toEqual(['node', 'dist/runtime/node/main.js']);
    for (const line of steps.lines.filter((l) => /^(ENV|ARG) /.test(l)))
      expect(line).not.toMatch(/SECRET|TOKEN|PASSWORD|CLIENTS|KEY/i);
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
    });
    const base = `http://127.0.0.1:${gateway.port}`;
    const token = await loginAt(base, 'crm', CLIENT_SECRET);
    const search = await fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0001')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(search.status).toBe(200);
    expect(((await search.json()) as { total: number }).total).toBeGreaterThan(0);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('process_cpu_user_seconds_total');

    const [hcNode, ...hcArgs] = steps.healthcheck;
    const check = await run(hcNode === 'node' ? process.execPath : hcNode!, hcArgs, {
      env: { PORT: String(gateway.port) },
    }).then(
      () => 0,
      (err: { code?: number }) => err.code ?? 1,
    );
    expect(check).toBe(0);

    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
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
