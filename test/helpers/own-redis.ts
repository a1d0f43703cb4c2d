// A redis-server of the test's own on a free (or given) loopback port, so a test can take Redis away and bring it back.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { tcpRequirement } from './requires.js';

export interface OwnRedis {
  url: string;
  port: number;
  /** SIGKILL: the way a crash looks to the gateway. */
  stop(): Promise<void>;
}

export async function startOwnRedis(fixedPort?: number): Promise<OwnRedis> {
  const port = fixedPort ?? (await freePort());
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 50 && !(await tcpRequirement('127.0.0.1', port, '')).present; i++) await new Promise((r) => setTimeout(r, 100));
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** The keys under a pattern in a test Redis (KEYS is fine there). */
export async function redisKeys(pattern: string, url = 'redis://127.0.0.1:6379'): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    return await client.keys(pattern);
  } finally {
    client.disconnect();
  }
}
