// A primary with a replica behind three Sentinels of the test's own (`redis-server sentinel.conf --sentinel`), on
// free loopback ports, nothing persisted, the Sentinels' files in a temporary directory (they rewrite them).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { redisCli } from './redis-cluster.mjs';
import { tcpRequirement } from './requires.js';

export const MASTER_NAME = 'callerid';

export interface SentinelProcesses {
  /** REDIS_SENTINELS for the gateway. */
  sentinels: string;
  /** The primary's and the replica's ports, as started. */
  masterPort: number;
  replicaPort: number;
  /** The port the Sentinels name as primary now. */
  currentMaster(): Promise<number>;
  /** Kills the first primary at once (SIGKILL), like a crash. */
  killMaster(): Promise<void>;
  /** Resolves once the Sentinels name the replica as primary. */
  promoted(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > until) throw new Error(`redis sentinel: ${what} not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

export async function startRedisSentinels(
  options: { downAfterMs?: number; /** The Sentinels want this password (`requirepass`). */ password?: string } = {},
): Promise<SentinelProcesses> {
  const dir = mkdtempSync(join(tmpdir(), 'callerid-sentinel-'));
  const children: ChildProcess[] = [];
  const start = (args: string[]) => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    children.push(child);
    return child;
  };
  const kill = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  // A test run cut short (a timeout, Ctrl-C) leaves no process behind.
  const killAll = () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(children.map(kill));
    rmSync(dir, { recursive: true, force: true });
  };
  const data = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const auth = options.password === undefined ? [] : ['-a', options.password, '--no-auth-warning'];
  const sentinelCli = (port: number, ...args: string[]) => redisCli(port, ...auth, ...args);
  const masterPort = await freePort();
  const replicaPort = await freePort();
  const master = start(['--port', String(masterPort), ...data]);
  start(['--port', String(replicaPort), '--replicaof', '127.0.0.1', String(masterPort), ...data]);
  const sentinelPorts: number[] = [];
  try {
    for (const port of [masterPort, replicaPort])
      await waitUntil(async () => (await tcpRequirement('127.0.0.1', port, '')).present, 5000, `redis on ${port}`);
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${MASTER_NAME} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${MASTER_NAME} 5000`,
          `sentinel parallel-syncs ${MASTER_NAME} 1`,
          ...(options.password === undefined
            ? []
            : [`requirepass ${options.password}`, `sentinel sentinel-pass ${options.password}`]),
          '',
        ].join('\n'),
      );
      start([conf, '--sentinel']);
      sentinelPorts.push(port);
    }
    // Ready when every Sentinel knows the replica and the two other Sentinels (needed to agree on a failover).
    for (const port of sentinelPorts) {
      await waitUntil(
        async () => {
          const fields = (await sentinelCli(port, 'sentinel', 'master', MASTER_NAME)).trim().split('\n');
          const field = (name: string) => fields[fields.indexOf(name) + 1];
          return field('num-slaves') === '1' && field('num-other-sentinels') === '2';
        },
        15_000,
        `sentinel ${port} knowing the replica and the others`,
      );
    }
    await waitUntil(
      async () => /master_link_status:up/.test(await redisCli(replicaPort, 'info', 'replication')),
      10_000,
      'the replica in sync',
    );
  } catch (err) {
    await stop();
    throw err;
  }
  const currentMaster = async () =>
    Number(
      (await sentinelCli(sentinelPorts[0]!, 'sentinel', 'get-master-addr-by-name', MASTER_NAME)).trim().split('\n')[1],
    );
  return {
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    masterPort,
    replicaPort,
    currentMaster,
    killMaster: () => kill(master),
    promoted: (timeoutMs = 20_000) =>
      waitUntil(
        async () =>
          (await currentMaster()) === replicaPort &&
          /role:master/.test(await redisCli(replicaPort, 'info', 'replication')),
        timeoutMs,
        'the replica promoted',
      ),
    stop,
  };
}
