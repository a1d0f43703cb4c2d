// The clients file swapped for what is not one, over real sockets: a symlink to /dev/zero, a FIFO (mkfifo), a
// directory, a file over GATEWAY_CLIENTS_FILE_MAX_BYTES (/proc's too, whose size says 0), a syntax error, a key given
// twice. Each reload is refused in one log line that quotes no byte of the file and counted; the gateway keeps
// answering with the last good clients (memory stays small, nothing hangs), and a good file afterwards is applied.
// At start, each stops the start in one line.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { ConfigError } from '../../src/config/config.js';
import { startNodeGateway, type RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { checkRequirement, commandRequirement, fileRequirement } from '../helpers/requires.js';
import { captureLogger, stackEnv, UPSTREAM_CLIENTS, type CapturedLog } from '../helpers/stack.js';

const SECRET = 'crm-file-secret-0123';
const MAX_BYTES = 4096;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hasMkfifo = checkRequirement(commandRequirement('mkfifo', ['--version'], 'mkfifo (GNU coreutils)'));
const hasProc = checkRequirement(fileRequirement('/proc/self/maps', 'a Linux /proc'));

/** A clients file's text with the one client `crm`, whose hash holds the distinctive hex a refusal must not show. */
const goodText = async () =>
  JSON.stringify({ clients: [{ id: 'crm', secrets: [{ hash: `sha256:${await sha256Hex(SECRET)}` }] }] });

/** Until `check` holds, asked every 25 ms; false after 15 s. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<boolean> {
  for (const since = Date.now(); Date.now() - since < 15_000; await sleep(25)) if (await check()) return true;
  return false;
}

/** Everything put where the file is goes in as a Secret's swap does: made beside it, then renamed over it. */
function swapIn(dir: string, path: string, make: (at: string) => void) {
  const next = join(dir, `.next-${Math.random()}`);
  make(next);
  renameSync(next, path);
}

describe('the clients file swapped for what is not one', () => {
  let simulator: SimulatorServer;
  let gateway: RunningGateway;
  let dir: string;
  let path: string;
  let logs: CapturedLog[];
  let hashHex: string;
  const refusals = () => logs.filter((l) => l.fields.event === 'clients_reload_refused');
  const refusedCount = async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    return Number(/^callerid_gateway_clients_reloads_total\{result="refused"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  const loginStatus = async () => {
    const res = await fetch(`${gateway.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'crm', client_secret: SECRET }),
    });
    await res.arrayBuffer();
    return res.status;
  };

  /** Swaps `make`'s thing in; the problem of the one refusal it causes, after checking the gateway kept on. */
  async function refusalOf(make: (at: string) => void): Promise<unknown> {
    const [lines, counted] = [refusals().length, await refusedCount()];
    swapIn(dir, path, make);
    expect(await eventually(() => refusals().length > lines)).toBe(true);
    // One line and one count per refused reload; the last good clients still log in.
    expect(await refusedCount()).toBe(counted + refusals().length - lines);
    expect(await loginStatus()).toBe(200);
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    return refusals().at(-1)!.fields.problem;
  }

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    dir = mkdtempSync(join(tmpdir(), 'clients-refusals-'));
    path = join(dir, 'clients.json');
    writeFileSync(path, await goodText());
    hashHex = await sha256Hex(SECRET);
    const { GATEWAY_CLIENTS: _, GATEWAY_ADMIN_CLIENTS: __, ...env } = await stackEnv(simulator.url);
    const logger = captureLogger();
    logs = logger.lines;
    gateway = await startNodeGateway(
      { ...env, GATEWAY_CLIENTS_FILE: path, GATEWAY_CLIENTS_FILE_MAX_BYTES: String(MAX_BYTES) },
      { logger },
    );
  });
  afterAll(async () => {
    await gateway?.close({ timeoutMs: 1000 });
    await simulator?.close();
  });

  it('refuses a symlink to /dev/zero without reading it: one line, counted, memory stays small', async () => {
    const rssBefore = process.memoryUsage.rss();
    expect(await refusalOf((at) => symlinkSync('/dev/zero', at))).toBe(
      'GATEWAY_CLIENTS_FILE: is a character device, not a regular file',
    );
    expect(process.memoryUsage.rss() - rssBefore).toBeLessThan(64 * 1024 ** 2);
  });

  it.skipIf(!hasMkfifo)('refuses a FIFO without waiting for a writer: the reload returns, routes answer', async () => {
    expect(await refusalOf((at) => execFileSync('mkfifo', [at]))).toBe(
      'GATEWAY_CLIENTS_FILE: is a FIFO, not a regular file',
    );
  });

  it('refuses a directory behind a symlink', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'clients-refusals-dir-'));
    expect(await refusalOf((at) => symlinkSync(elsewhere, at))).toBe(
      'GATEWAY_CLIENTS_FILE: is a directory, not a regular file',
    );
  });

  it('refuses a file over GATEWAY_CLIENTS_FILE_MAX_BYTES, valid JSON or not', async () => {
    const text = await goodText();
    const big = text + ' '.repeat(MAX_BYTES + 1 - text.length);
    expect(await refusalOf((at) => writeFileSync(at, big))).toBe(
      `GATEWAY_CLIENTS_FILE: is larger than GATEWAY_CLIENTS_FILE_MAX_BYTES (${MAX_BYTES} bytes)`,
    );
  });

  it('names a syntax error by its place, with no byte of the file in the line', async () => {
    const broken = (await goodText()).replace(`"sha256:${hashHex}"`, `sha256:${hashHex}`);
    const problem = await refusalOf((at) => writeFileSync(at, broken));
    expect(problem).toBe('GATEWAY_CLIENTS_FILE: is not JSON (invalid symbol at line 1, column 44)');
    const line = JSON.stringify(refusals().at(-1));
    for (let i = 0; i + 3 <= hashHex.length; i++) expect(line).not.toContain(hashHex.slice(i, i + 3));
  });

  it('refuses a key given twice, where JSON.parse would keep the last', async () => {
    const twice = (await goodText()).replace('"id":"crm"', '"id":"crm","id":"crm"');
    expect(await refusalOf((at) => writeFileSync(at, twice))).toBe(
      'GATEWAY_CLIENTS_FILE: gives a key twice in one object (at line 1, column 25)',
    );
  });

  it.skipIf(!hasProc)('quotes nothing of /proc/self/environ, a regular file whose size says 0', async () => {
    const problem = await refusalOf((at) => symlinkSync('/proc/self/environ', at));
    expect([
      'GATEWAY_CLIENTS_FILE: is not JSON (invalid symbol at line 1, column 1)',
      `GATEWAY_CLIENTS_FILE: is larger than GATEWAY_CLIENTS_FILE_MAX_BYTES (${MAX_BYTES} bytes)`,
    ]).toContain(problem);
    const line = JSON.stringify(refusals().at(-1));
    for (const [name, value] of Object.entries(process.env)) {
      expect(line).not.toContain(`${name}=`);
      if (value !== undefined && value.length >= 8) expect(line).not.toContain(value);
    }
  });

  it('applies a good file afterwards', async () => {
    const applied = logs.filter((l) => l.fields.event === 'clients_reloaded').length;
    swapIn(dir, path, (at) => writeFileSync(at, JSON.stringify({ clients: [] })));
    expect(await eventually(() => logs.filter((l) => l.fields.event === 'clients_reloaded').length > applied)).toBe(
      true,
    );
    expect(await eventually(async () => (await loginStatus()) === 400)).toBe(true);
  });
});

describe('the clients file at start, when it is not one', () => {
  const startWith = async (path: string, extra: Record<string, string> = {}) => {
    const { GATEWAY_CLIENTS: _, GATEWAY_ADMIN_CLIENTS: __, ...env } = await stackEnv('http://127.0.0.1:9');
    return startNodeGateway({ ...env, GATEWAY_CLIENTS_FILE: path, ...extra }, { logger: captureLogger() }).then(
      async (g) => {
        await g.close({ timeoutMs: 100 });
        return undefined;
      },
      (err: unknown) => err,
    );
  };
  const dir = mkdtempSync(join(tmpdir(), 'clients-start-'));
  const at = (name: string) => join(dir, name);

  it('stops the start in one line for a device, a FIFO, a directory, a file too big, a key twice', async () => {
    symlinkSync('/dev/zero', at('zero.json'));
    mkdirSync(at('dir.json'));
    writeFileSync(at('big.json'), `{"clients": []}${' '.repeat(2048)}`);
    writeFileSync(at('twice.json'), '{"clients": [], "clients": []}');
    const cases: [string, string][] = [
      ['zero.json', 'is a character device, not a regular file'],
      ['dir.json', 'is a directory, not a regular file'],
      ['big.json', 'is larger than GATEWAY_CLIENTS_FILE_MAX_BYTES (1024 bytes)'],
      ['twice.json', 'gives a key twice in one object (at line 1, column 17)'],
    ];
    if (hasProc) {
      // Its metadata says 0 bytes: only the read itself finds it bigger than the bound.
      symlinkSync('/proc/self/maps', at('maps.json'));
      cases.push(['maps.json', 'is larger than GATEWAY_CLIENTS_FILE_MAX_BYTES (1024 bytes)']);
    }
    if (hasMkfifo) {
      execFileSync('mkfifo', [at('fifo.json')]);
      cases.push(['fifo.json', 'is a FIFO, not a regular file']);
    }
    for (const [name, problem] of cases) {
      const err = await startWith(at(name), { GATEWAY_CLIENTS_FILE_MAX_BYTES: '1024' });
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toBe(`configuration error: GATEWAY_CLIENTS_FILE: ${at(name)}: ${problem}`);
    }
  });

  it('names GATEWAY_CLIENTS_FILE_MAX_BYTES when it is out of range', async () => {
    writeFileSync(at('empty.json'), '{"clients": []}');
    const err = await startWith(at('empty.json'), { GATEWAY_CLIENTS_FILE_MAX_BYTES: '10' });
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/^configuration error: GATEWAY_CLIENTS_FILE_MAX_BYTES: /);
    expect((err as Error).message.split('\n')).toHaveLength(1);
  });
});
