// `npm start` is the README's way to run the gateway: stopping it by npm's own process id (what a process
// supervisor or `kill $(pgrep npm)` does) must stop the gateway too, not leave node listening as an orphan.
import { spawn } from 'node:child_process';
import { copyFile, symlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, REPO, type BuiltDist } from './build-dist.js';

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  let built: BuiltDist;
  beforeAll(async () => {
    built = await buildDist('callerid-npm-start-');
    await copyFile(join(REPO, 'package.json'), join(built.dir, 'package.json'));
    await symlink(join(REPO, 'node_modules'), join(built.dir, 'node_modules'));
  }, 120_000);
  afterAll(async () => {
    await built?.cleanup();
  });

  it('stops the gateway when npm’s own process is sent SIGTERM', async () => {
    // --ignore-scripts skips prestart's build (done above); the start script itself still runs.
    const npm = spawn('npm', ['start', '--ignore-scripts', '--silent'], {
      cwd: built.dir,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        PORT: '0',
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no start line within 30 s')), 30_000);
      createInterface({ input: npm.stdout! }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const parsed = JSON.parse(line) as { event?: string; port?: number };
        if (parsed.event === 'start') {
          clearTimeout(timer);
          resolve(Number(parsed.port));
        }
      });
    });
    expect(await listening(port)).toBe(true);
    npm.kill('SIGTERM');
    const deadline = Date.now() + 10_000;
    while ((await listening(port)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await listening(port)).toBe(false);
  }, 60_000);
});
