// What a newcomer sees when the start fails, from the built entry point (`node dist/runtime/node/main.js`, as the
// container runs it): one line per problem on stderr, exit 1, no stack trace.
import { spawn } from 'node:child_process';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, REPO, type BuiltDist } from './build-dist.js';

interface Exit {
  code: number | null;
  stderr: string;
}

function runEntry(dir: string, env: Record<string, string>): Promise<Exit> {
  const child = spawn(process.execPath, ['dist/runtime/node/main.js'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

describe('start failures of the built entry point', () => {
  let built: BuiltDist;
  let blocker: Server;
  let takenPort: number;

  beforeAll(async () => {
    built = await buildDist('callerid-start-errors-');
    // The repository's dependencies, as the container's `npm ci` would install them.
    await symlink(join(REPO, 'node_modules'), join(built.dir, 'node_modules'), 'dir');
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    takenPort = (blocker.address() as { port: number }).port;
  }, 180_000);
  afterAll(async () => {
    await new Promise((resolve) => blocker?.close(resolve));
    await built?.cleanup();
  });

  it('names the port in one line and exits 1 when the port is already in use', async () => {
    // Demo mode: no upstream settings needed, so the port is the only problem.
    const exit = await runEntry(built.dir, { PORT: String(takenPort), HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
    expect(exit.code).toBe(1);
    const lines = exit.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`port ${takenPort} is already in use`));
    expect(exit.stderr).not.toMatch(/\n\s+at /);
  });

  it('names METRICS_PORT in one line and exits 1 when the metrics port is already in use', async () => {
    const exit = await runEntry(built.dir, {
      PORT: '0',
      METRICS_PORT: String(takenPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
    });
    expect(exit.code).toBe(1);
    const lines = exit.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`port ${takenPort} is already in use .*set METRICS_PORT to a free port`));
  });

  it('reports every wrong setting at once, one line each, saying what is allowed', async () => {
    const exit = await runEntry(built.dir, {
      PORT: '0',
      LOG_LEVEL: 'verbose',
      CACHE_TTL_SECONDS: 'abc',
      UPSTREAM_TIMEOUT_MS: '-5',
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr.trim().split('\n').sort()).toEqual([
      'configuration error: CACHE_TTL_SECONDS: must be a whole number from 0 to 31536000',
      'configuration error: LOG_LEVEL: must be one of debug, info, warn, error, silent',
      'configuration error: UPSTREAM_TIMEOUT_MS: must be a whole number from 50 to 60000',
    ]);
  });

  it('refuses a name it no longer reads with one line pointing to what replaced it', async () => {
    const exit = await runEntry(built.dir, { PORT: '0', LOG_LEVEL: 'silent', CONSOLE_UPSTREAM_QUOTA_PER_DAY: '50' });
    expect(exit.code).toBe(1);
    expect(exit.stderr.trim().split('\n')).toEqual([
      "configuration error: CONSOLE_UPSTREAM_QUOTA_PER_DAY: is no longer read: give the console's quota as console:N in CLIENT_UPSTREAM_QUOTAS (default 1000)",
    ]);
  });
});
