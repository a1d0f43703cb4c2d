// A Redis Cluster of its own for a test or a bench: three masters with a replica each, on free loopback ports below
// 55000 (a cluster node also listens on its port + 10000), nothing persisted, all in a temporary directory. Plain
// JavaScript (typed by redis-cluster.d.mts), so that bench/replicas.mjs starts the same cluster as the tests.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function canListen(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port P below 55000 with P and P + 10000 (the cluster bus) free a moment ago. */
async function freeClusterPort(taken) {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 35000);
    if (taken.has(port) || taken.has(port + 10000)) continue;
    if ((await canListen(port)) && (await canListen(port + 10000))) {
      taken.add(port);
      taken.add(port + 10000);
      return port;
    }
  }
}

function listening(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** redis-cli's answer as text; rejects when it fails. */
export function redisCli(port, ...args) {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 20_000 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

/**
 * Starts six nodes and joins them into a cluster (`redis-cli --cluster create ... --cluster-replicas 1`).
 * `nodeTimeoutMs` is cluster-node-timeout: how soon a dead master's replica takes over.
 */
export async function startRedisCluster(options = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'callerid-cluster-'));
  const taken = new Set();
  const ports = [];
  for (let i = 0; i < 6; i++) ports.push(await freeClusterPort(taken));
  const children = new Map();
  for (const port of ports) children.set(port, spawnNode(port, dir, options));
  // A test run cut short (a timeout, Ctrl-C) leaves no node behind.
  const killAll = () => {
    for (const child of children.values()) if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const stopAll = async () => {
    process.off('exit', killAll);
    await Promise.all([...children.keys()].map((port) => kill(port)));
    if (!process.env.DBG_CLUSTER) rmSync(dir, { recursive: true, force: true });
  };
  async function kill(port) {
    const child = children.get(port);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }
  try {
    for (const port of ports) for (let i = 0; i < 50 && !(await listening(port)); i++) await sleep(100);
    await redisCli(
      ports[0],
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    );
    await waitUntil(async () => (await Promise.all(ports.map(clusterOk))).every(Boolean), 20_000);
    // And every replica in sync with its master, so that a master killed now has a replica to take over.
    await waitUntil(async () => (await Promise.all(ports.map(replicaReady))).every(Boolean), 20_000);
  } catch (err) {
    await stopAll();
    throw err;
  }

  const masters = () => mastersOf(ports, children);

  return {
    ports,
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    seeds: ports
      .slice(0, 3)
      .map((p) => `127.0.0.1:${p}`)
      .join(','),
    masters,
    /** The master serving `key`'s slot now. */
    async masterOf(key) {
      const slot = Number((await redisCli(ports[0], 'cluster', 'keyslot', key)).trim());
      for (const m of await masters()) {
        for (const range of m.slots) {
          const [from, to = from] = range.split('-').map(Number);
          if (slot >= from && slot <= to) return m.port;
        }
      }
      return undefined;
    },
    /** Kills a node at once (SIGKILL), like a crash. */
    kill,
    /** Resolves once every live node says the cluster is OK and `port` is no longer a master (its replica took over). */
    async failedOver(port, timeoutMs = 20_000) {
      await waitUntil(async () => {
        const live = ports.filter(
          (p) => p !== port && children.get(p).exitCode === null && !children.get(p).signalCode,
        );
        if (!(await Promise.all(live.map(clusterOk))).every(Boolean)) return false;
        const now = await masters();
        const covered = now
          .flatMap((m) => m.slots)
          .map((range) => range.split('-').map(Number))
          .reduce((sum, [from, to = from]) => sum + (to - from + 1), 0);
        return covered === 16384 && !now.some((m) => m.port === port);
      }, timeoutMs);
    },
    stop: stopAll,
  };
}

async function clusterOk(port) {
  const info = await redisCli(port, 'cluster', 'info').catch(() => '');
  return /cluster_state:ok/.test(info);
}

/** A master, or a replica whose link to its master is up. */
async function replicaReady(port) {
  const info = await redisCli(port, 'info', 'replication').catch(() => '');
  return /role:master/.test(info) || /master_link_status:up/.test(info);
}

async function waitUntil(check, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`redis cluster: not ready within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** One cluster node on `port`, its files in `dir`. */
function spawnNode(port, dir, options) {
  return spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      `nodes-${port}.conf`,
      '--cluster-node-timeout',
      String(options.nodeTimeoutMs ?? 1000),
      // A replica takes over however long ago it heard from its master (the default may refuse after a pause).
      '--cluster-replica-validity-factor',
      '0',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      ...(process.env.DBG_CLUSTER ? ['--logfile', `${dir}/${port}.log`] : []),
    ],
    { stdio: 'ignore' },
  );
}

/** Masters' ports with their slot ranges, as a live node sees them now. */
async function mastersOf(ports, children) {
  for (const port of ports) {
    const child = children.get(port);
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const text = await redisCli(port, 'cluster', 'nodes').catch(() => '');
    if (text === '') continue;
    return text
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => f[2].includes('master') && !f[2].includes('fail') && f.length > 8)
      .map((f) => ({ port: Number(f[1].split(':')[1].split('@')[0]), slots: f.slice(8) }));
  }
  return [];
}
