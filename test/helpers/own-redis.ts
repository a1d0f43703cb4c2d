// A redis-server of the test's own on a free port (or a given one, to restart it where it was), so a test can
// take Redis away mid-traffic and bring it back; nothing persisted.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';
import { tcpRequirement } from './requires.js';

export interface OwnRedis {
  url: string;
  port: number;
  /** Kills it at once (SIGKILL), like a crash. */
  stop(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open and nothing answers, like a hung server. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
}

export interface OwnRedisOptions {
  /** More redis-server arguments, e.g. ACL users (`--user name on >password ~* &* +@all`). */
  args?: string[];
  /** Serve TLS only, with these PEM files (the plain port is closed); the URL is then `rediss://`. */
  tls?: { certFile: string; keyFile: string; caFile: string };
}

export async function startOwnRedis(fixedPort?: number, options: OwnRedisOptions = {}): Promise<OwnRedis> {
  const port = fixedPort ?? (await freePort());
  const { tls } = options;
  const listen = tls
    ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile]
    : ['--port', String(port)];
  const trust = tls ? ['--tls-ca-cert-file', tls.caFile, '--tls-auth-clients', 'no'] : [];
  const child: ChildProcess = spawn(
    'redis-server',
    [...listen, ...trust, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...(options.args ?? [])],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 50 && !(await tcpRequirement('127.0.0.1', port, '')).present; i++)
    await new Promise((r) => setTimeout(r, 100));
  return {
    url: `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    port,
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
