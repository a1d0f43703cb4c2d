// Runs the Worker build in real workerd (`wrangler dev` on a loopback port) with the given bindings.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { checkRequirement, fileRequirement } from './requires.js';

/** True when wrangler (and so workerd) is installed; see checkRequirement for CI=true. */
export const wranglerPresent = (): boolean =>
  checkRequirement(
    fileRequirement('node_modules/.bin/wrangler', 'wrangler (npm ci installs it) with its workerd binary'),
  );

export interface WranglerDev {
  url: string;
  close(): void;
  /** Resolves once wrangler and its workerd have exited (after close()). */
  exited: Promise<void>;
}

export interface WranglerDevOptions {
  /** State directory to keep across runs (a restart test); default: a fresh one, removed on close. */
  persistTo?: string;
}

/** Tries to start `wrangler dev` on a port found free a moment before: another process may take it meanwhile. */
const PORT_ATTEMPTS = 3;

export async function startWranglerDev(
  vars: Record<string, string>,
  options: WranglerDevOptions = {},
): Promise<WranglerDev> {
  // Durable Object and Cache API state of its own: counts of an earlier run (a second CI leg a minute later)
  // must not carry over into this one, as they would from the default .wrangler/state.
  const state = options.persistTo ?? mkdtempSync(join(tmpdir(), 'callerid-wrangler-'));
  for (let attempt = 1; ; attempt++) {
    const started = await startOnce(vars, state, await freePort());
    if (typeof started !== 'string') return { ...started, close: () => closeWith(started, options, state) };
    // The port went to another process between freePort and wrangler's bind: a new port, a new start.
    if (!/Address already in use/.test(started) || attempt === PORT_ATTEMPTS) {
      if (options.persistTo === undefined) rmSync(state, { recursive: true, force: true });
      throw new Error(`wrangler dev did not start: ${started.slice(-2000)}`);
    }
  }
}

function closeWith(started: WranglerDev, options: WranglerDevOptions, state: string): void {
  started.close();
  if (options.persistTo === undefined) rmSync(state, { recursive: true, force: true });
}

/** One start on `port`: the running Worker, or the output of a wrangler that exited or never became ready. */
async function startOnce(vars: Record<string, string>, state: string, port: number): Promise<WranglerDev | string> {
  const args = [
    'wrangler',
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    '0',
    '--show-interactive-dev-session=false',
    '--log-level',
    'info',
    '--persist-to',
    state,
  ];
  for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
  const worker = spawn('npx', args, {
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so close() ends wrangler and the workerd it started.
    detached: true,
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let output = '';
  worker.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  worker.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const close = () => {
    try {
      if (worker.pid) process.kill(-worker.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  const deadline = Date.now() + 90_000;
  while (!/Ready on/.test(output)) {
    if (worker.exitCode !== null || Date.now() > deadline) {
      close();
      await exited;
      return output;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url: `http://127.0.0.1:${port}`, close, exited };
}
