// `npm run bench:replicas` (also the last part of `npm run bench`): what several replicas cost the paid upstream, and
// what the shared tier costs the hit path. One process against three replicas sharing one Redis (a fresh key prefix),
// both fed the same skewed (Zipf-like) stream of numbers, round robin over the replicas; then wrk on the hit path of
// a gateway with REDIS_URL and one without, side by side, alternated; then the same stream over three replicas on a
// three-shard Redis Cluster of this bench's own (three masters with a replica each, on free ports below 55000;
// `--no-cluster` skips it). Counts come from the simulator (this process).
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { spawnSync } from 'node:child_process';
import {
  benchLogin,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  build,
  createHarness,
  LOAD_CORE,
  log,
} from './harness.mjs';
import { seededRandom, shuffle, zipfPicker } from './zipf.mjs';
import { startRedisCluster } from '../test/helpers/redis-cluster.mjs';

const quick = process.argv.includes('--quick');
const withCluster = !process.argv.includes('--no-cluster');
const REQUESTS = 3000;
const RANKS = 300;
const ZIPF_S = 1.0;
const CONCURRENCY = 24;
const HIT_SECONDS = quick ? 2 : 5;
const HIT_ROUNDS = quick ? 1 : 2;
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const HIT_NUMBER = '+442079460010';

const started = Date.now();
build();
const { canPin, startChild, withCpu, wrk, children } = createHarness();
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const { createDirectoryIndex } = await import('../dist/simulator/directory.js');
const { Redis } = await import('ioredis');

// --- the stream: 300 numbers (every listed one, the rest unlisted from the same fiction range), Zipf-ranked ---------
const rnd = seededRandom(20251121);
const listed = createDirectoryIndex().numbers();
const unlisted = shuffle(
  Array.from({ length: 1000 }, (_, i) => `+442079460${String(i).padStart(3, '0')}`).filter((n) => !listed.includes(n)),
  rnd,
);
const ranked = shuffle([...listed, ...unlisted].slice(0, RANKS), rnd);
const pick = zipfPicker(ranked, ZIPF_S, rnd);
const stream = Array.from({ length: REQUESTS }, pick);
const distinct = new Set(stream).size;

// --- set-up ------------------------------------------------------------------------------------------------------------
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const prefix = `bench-${randomUUID()}`;
const gatewayEnv = { ...benchGatewayEnv(simulator.url), LOG_LEVEL: 'warn', REDIS_URL: '' };
log(
  `starting the simulator, one gateway without Redis and three replicas on ${REDIS_URL.replace(/\/\/.*@/, '//')} (prefix ${prefix})`,
);
const single = await startChild('servers/gateway.mjs', gatewayEnv);
const replicas = await Promise.all(
  [0, 1, 2].map(() => startChild('servers/gateway.mjs', { ...gatewayEnv, REDIS_URL, REDIS_KEY_PREFIX: prefix })),
);
const token = await benchLogin(single.url);

/** The stream against `urls` round robin, CONCURRENCY at a time; upstream calls as the simulator counts them. */
async function drive(urls) {
  simulator.controls.resetStats();
  const kinds = {};
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < stream.length) {
        const i = next++;
        const res = await fetch(`${urls[i % urls.length]}/v2/contacts/search?what=${encodeURIComponent(stream[i])}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        await res.arrayBuffer();
        const kind =
          res.status === 200
            ? (res.headers.get('cache-status') ?? '').replace(/^callerid-gateway; /, '').replace(/; ttl=-?\d+/, '')
            : `status ${res.status}`;
        kinds[kind] = (kinds[kind] ?? 0) + 1;
      }
    }),
  );
  const { searchCalls, tokenCalls } = simulator.controls.stats();
  return { searchCalls, tokenCalls, kinds, seconds: (performance.now() - t0) / 1000 };
}

log(
  `cost: ${REQUESTS} requests over ${distinct} distinct numbers (Zipf s=${ZIPF_S} over ${RANKS}), ${CONCURRENCY} at a time: one process`,
);
// Token logins are counted from the start (each gateway logs in on its first miss), so reset only the search counts.
const one = await drive([single.url]);
log('cost: the same stream round robin over three replicas sharing Redis');
const three = await drive(replicas.map((r) => r.url));
/** Lookups that went on alone because Redis failed or was slower than REDIS_TIMEOUT_MS (a busy machine does that). */
const fallbacks = (
  await Promise.all(
    replicas.map(async (r) => {
      const text = await (await fetch(`${r.url}/metrics`)).text();
      return Number(/shared_store_fallbacks_total\{store="lookup"\} (\d+)/.exec(text)?.[1] ?? NaN);
    }),
  )
).reduce((a, b) => a + b, 0);

// --- the same stream over three replicas on a three-shard Redis Cluster ------------------------------------------------
let onCluster = null;
if (withCluster) {
  log('cost: the same stream round robin over three replicas sharing a three-shard Redis Cluster (started here)');
  const cluster = await startRedisCluster();
  try {
    const clusterReplicas = await Promise.all(
      [0, 1, 2].map(() =>
        startChild('servers/gateway.mjs', {
          ...gatewayEnv,
          REDIS_CLUSTER_NODES: cluster.seeds,
          REDIS_KEY_PREFIX: prefix,
        }),
      ),
    );
    // drive() counts from its start: these replicas log in (once for the three, through the cluster) on their first miss.
    onCluster = await drive(clusterReplicas.map((r) => r.url));
    onCluster.shards = (await cluster.masters()).length;
    for (const r of clusterReplicas) {
      r.child.send({ type: 'stop' });
      children.splice(children.indexOf(r.child), 1);
    }
  } finally {
    await cluster.stop();
  }
}

// --- hit path: REDIS_URL set vs not, alternated so drift on the shared machine hits both alike --------------------------
const hitPath = `/v2/contacts/search?what=${encodeURIComponent(HIT_NUMBER)}`;
for (const server of [single, replicas[0]])
  await fetch(`${server.url}${hitPath}`, { headers: { authorization: `Bearer ${token}` } }).then((r) =>
    r.arrayBuffer(),
  );
const hit = { without: [], with: [] };
for (let round = 0; round < HIT_ROUNDS; round++) {
  for (const [name, server] of [
    ['without', single],
    ['with', replicas[0]],
  ]) {
    log(`hit path, round ${round + 1}: ${name} REDIS_URL`);
    const env = { BENCH_PATH: hitPath, BENCH_TOKEN: token };
    await wrk({ url: server.url, script: 'fixed.lua', connections: 50, seconds: 1, env });
    hit[name].push(
      await withCpu(server.child.pid, () =>
        wrk({ url: server.url, script: 'fixed.lua', connections: 50, seconds: HIT_SECONDS, env }),
      ),
    );
  }
}
const sum = (runs, f) => runs.reduce((a, r) => a + f(r), 0);
const rps = (runs) => sum(runs, (r) => r.requests) / sum(runs, (r) => r.durationUs / 1e6);
const cpu = (runs) => sum(runs, (r) => r.cpuPerReq * r.requests) / sum(runs, (r) => r.requests);
const p99 = (runs) => Math.max(...runs.map((r) => r.p99)) / 1000;
const errors = (runs) => sum(runs, (r) => r.errors + r.non2xx);

// --- clean up this run's keys (never anything else) ---------------------------------------------------------------------
const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
await redis.connect();
let left = 0;
let cursor = '0';
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
  if (keys.length > 0) left += await redis.unlink(...keys);
  cursor = next;
} while (cursor !== '0');
redis.disconnect();

// --- report --------------------------------------------------------------------------------------------------------------
const rows = [
  ['measure', '1 process', '3 replicas + Redis', 'ratio', 'note'],
  [
    'upstream search calls',
    one.searchCalls,
    three.searchCalls,
    `${(three.searchCalls / one.searchCalls).toFixed(3)}x`,
    `target <= 1.02x; ${distinct} distinct numbers in the stream; ${fallbacks} lookup(s) went on without Redis (timeout or error)`,
  ],
  [
    'upstream token logins',
    one.tokenCalls,
    three.tokenCalls,
    `${(three.tokenCalls / Math.max(1, one.tokenCalls)).toFixed(2)}x`,
    'target: 1 for the deployment (shared token: token branch)',
  ],
  ...(onCluster
    ? [
        [
          'upstream search calls, Cluster',
          one.searchCalls,
          onCluster.searchCalls,
          `${(onCluster.searchCalls / one.searchCalls).toFixed(3)}x`,
          `target <= 1.02x; three replicas on a ${onCluster.shards}-shard Redis Cluster; ${onCluster.tokenCalls} upstream login(s) for the three; ${fmtKinds(onCluster.kinds)}`,
        ],
      ]
    : []),
  [
    'answers (Cache-Status)',
    fmtKinds(one.kinds),
    fmtKinds(three.kinds),
    '',
    `${REQUESTS} requests each; ${one.seconds.toFixed(1)} s vs ${three.seconds.toFixed(1)} s`,
  ],
  [
    'hit path req/s (50 conn.)',
    `${rps(hit.without).toFixed(0)} (${cpu(hit.without).toFixed(1)} µs CPU/req, p99 ${p99(hit.without).toFixed(2)} ms)`,
    `${rps(hit.with).toFixed(0)} (${cpu(hit.with).toFixed(1)} µs CPU/req, p99 ${p99(hit.with).toFixed(2)} ms)`,
    `${(rps(hit.with) / rps(hit.without)).toFixed(2)}x req/s, ${(cpu(hit.without) / cpu(hit.with)).toFixed(2)}x by CPU/req`,
    `one gateway without REDIS_URL vs one with; ${HIT_ROUNDS} alternated rounds of ${HIT_SECONDS} s each; ${errors(hit.without) + errors(hit.with)} errors`,
  ],
];
function fmtKinds(kinds) {
  return Object.entries(kinds)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v} ${k.replace('fwd-status=200; stored', 'stored')}`)
    .join(', ');
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
process.stdout.write(
  `\ncallerid-gateway replicas bench (${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores, ` +
    `${canPin ? 'servers on core 0, load on core 1' : 'not pinned'})\n` +
    [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n') +
    `\n${left} keys of this run removed from Redis; total ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);

for (const child of children) child.send({ type: 'stop' });
await simulator.close();
setTimeout(() => process.exit(0), 500).unref();
