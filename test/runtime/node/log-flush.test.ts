// The access log is written through a buffer (log-destination.ts, flushed every LOG_FLUSH_MS): the built entry point
// (`node dist/runtime/node/main.js`) must write every line of every answered request while it runs, when it stops on
// SIGTERM and when it crashes (an uncaught exception, injected by a preload module on SIGUSR2); and with a stdout
// whose reader never reads, SIGTERM must still end it within LOG_EXIT_WAIT_MS of its requests being done.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/auth/client-registry.js';
import { LOG_EXIT_WAIT_MS } from '../../../src/runtime/node/log-destination.js';
import { startSimulatorServer, type SimulatorServer } from '../../../src/simulator/server.js';
import {
  buildRunnableDist,
  productionGatewayEnv,
  startGatewayProcess,
  type BuiltDist,
  type GatewayProcess,
} from '../../container/build-dist.js';

const REQUESTS = 400;

describe('the buffered access log of the Node entry point', () => {
  let built: BuiltDist;
  let simulator: SimulatorServer;
  let env: Record<string, string>;
  let crashModule: string;
  const running: GatewayProcess[] = [];

  beforeAll(async () => {
    built = await buildRunnableDist('callerid-log-flush-');
    crashModule = join(built.dir, 'crash-on-signal.mjs');
    await writeFile(
      crashModule,
      "process.on('SIGUSR2', () => setImmediate(() => { throw new Error('injected crash'); }));\n",
    );
    simulator = await startSimulatorServer({ clients: { 'gateway-lf': 'upstream-secret-lf' } });
    env = productionGatewayEnv({
      simulatorUrl: simulator.url,
      upstreamClientId: 'gateway-lf',
      upstreamSecret: 'upstream-secret-lf',
      signingKey: 'log-flush-test-signing-key-of-32-bytes!!',
      clients: `crm:${await sha256Hex('log-flush-client-secret-0123')}`,
    });
  }, 120_000);

  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await simulator?.close();
    await built?.cleanup();
  });

  /** Sends REQUESTS unauthenticated searches (each answered and logged), ten at a time; returns their request ids. */
  async function answered(port: number, tag: string): Promise<string[]> {
    const ids = Array.from({ length: REQUESTS }, (_, i) => `${tag}-${i}`);
    for (let i = 0; i < ids.length; i += 10) {
      await Promise.all(
        ids.slice(i, i + 10).map(async (id) => {
          const res = await fetch(`http://127.0.0.1:${port}/v2/contacts/search?what=02079460001`, {
            headers: { 'x-request-id': id },
          });
          await res.arrayBuffer();
          expect([401, 429]).toContain(res.status);
        }),
      );
    }
    return ids;
  }

  /** Starts the built gateway with stdout on a FIFO held open here; its pipe is read only until the start line. */
  async function startWithStuckReader(): Promise<{
    child: ChildProcess;
    port: number;
    exited: Promise<number | string | null>;
  }> {
    const path = join(built.dir, 'stdout-fifo');
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
    const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeFd = openSync(path, constants.O_WRONLY);
    const child = spawn(process.execPath, ['dist/runtime/node/main.js'], {
      cwd: built.dir,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', writeFd, 'inherit'],
    });
    closeSync(writeFd);
    const exited = new Promise<number | string | null>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? signal)),
    );
    // The read end stays open and unread until the process has ended: a stuck collector, not a gone one (EPIPE).
    void exited.then(() => closeSync(readFd));
    running.push({ child, port: 0, lines: [], stderr: () => '', exited });
    const chunk = Buffer.alloc(65_536);
    let text = '';
    for (let waited = 0; waited < 20_000; waited += 20) {
      try {
        const n = readSync(readFd, chunk, 0, chunk.length, null);
        text += chunk.toString('utf8', 0, n);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      }
      const start = text
        .split('\n')
        .slice(0, -1) // whole lines only
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.event === 'start');
      if (start) return { child, port: Number(start.port), exited };
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no start line within 20 s');
  }

  it('ends on SIGTERM within LOG_EXIT_WAIT_MS (and the shutdown) when nobody reads its stdout', async () => {
    const gateway = await startWithStuckReader();
    // About 160 KB of lines: more than the pipe holds (64 KiB); the rest waits in the gateway for the reader.
    await answered(gateway.port, 'stuck-a');
    await answered(gateway.port, 'stuck-b');
    // Past the flush interval, so every line has been offered to the full pipe once.
    await new Promise((r) => setTimeout(r, 500));
    const signalled = performance.now();
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    const tookMs = performance.now() - signalled;
    // The wait for the log is spent once, however many flushes the shutdown makes (after the last line, then the exit
    // handler): 2.02 s measured, where a wait per flush took 4.02 s. The margin is for a busy machine.
    expect(tookMs).toBeGreaterThanOrEqual(LOG_EXIT_WAIT_MS * 0.9);
    expect(tookMs).toBeLessThan(LOG_EXIT_WAIT_MS + 1500);
  }, 60_000);

  function loggedIds(gateway: GatewayProcess): string[] {
    return gateway.lines.filter((l) => l.event === 'request').map((l) => String(l.requestId));
  }

  it('writes the buffered lines while running, without a stop or more traffic to push them out', async () => {
    const gateway = await startGatewayProcess(built.dir, env);
    running.push(gateway);
    const ids = await answered(gateway.port, 'live');
    // Flushed every LOG_FLUSH_MS (250 ms); polled for a few seconds so a busy machine does not fail the test.
    for (let waited = 0; loggedIds(gateway).length < ids.length && waited < 5000; waited += 50)
      await new Promise((r) => setTimeout(r, 50));
    expect(loggedIds(gateway).sort()).toEqual([...ids].sort());
    expect(gateway.child.exitCode).toBeNull();
  }, 60_000);

  it('writes the line of every answered request when stopped with SIGTERM', async () => {
    const gateway = await startGatewayProcess(built.dir, env);
    running.push(gateway);
    const ids = await answered(gateway.port, 'term');
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    expect(loggedIds(gateway).sort()).toEqual([...ids].sort());
    expect(gateway.lines.at(-1)).toMatchObject({ event: 'stopped' });
  }, 60_000);

  it('writes the line of every answered request, and the crash, when an uncaught exception ends the process', async () => {
    const gateway = await startGatewayProcess(built.dir, {
      ...env,
      NODE_OPTIONS: `--import=${pathToFileURL(crashModule).href}`,
    });
    running.push(gateway);
    const ids = await answered(gateway.port, 'crash');
    gateway.child.kill('SIGUSR2');
    expect(await gateway.exited).toBe(1);
    expect(loggedIds(gateway).sort()).toEqual([...ids].sort());
    expect(gateway.lines.at(-1)).toMatchObject({ event: 'crash', level: 'error', error: 'injected crash' });
    expect(gateway.stderr()).toContain('injected crash');
  }, 60_000);
});
