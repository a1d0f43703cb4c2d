// `node bench/hit.mjs [--before <baseline or git-ref>] [--rounds N] [--seconds S] [--together] [--no-build]` (also part
// of `npm run bench`): the cache-hit path at 50 connections, side by side in one run: a bare node:http server answering
// the same body, the same server with the search's header fields and access-log line (the floor for an answer that
// keeps the contract), the same job built from stock parts the way their docs show it (servers/stock-parts.mjs: what
// a user would write without the gateway), this build's gateway without REDIS_URL, this build with REDIS_URL (shared
// token, lookup tier, counters), this build with tracing on at ratio 1.0 three times (a collector that answers 200, a
// collector that is down, one that accepts and never answers), and (with --before, a name from bench/baselines.mjs)
// the gateway built from <ref>. Rounds alternate the order so drift on a shared machine hits all alike; the table has
// medians of req/s, p50, p99 and server CPU per request, and each one's ratio to the before and to bare node; a second
// table sets this build's rows against this build with tracing off, with the spans each traced gateway counts as
// dropped. With --together every round loads all servers at once (each its own wrk), for ratios that hold on a machine
// whose speed drifts between rounds; req/s are then shares of one core, not each server's own. Every feature on the hit
// path (client rate, revocation check, shared stores) must show here as ~1x.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  arg,
  BENCH_CLIENT_SECRET,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  build,
  buildBaseline,
  createHarness,
  LOAD_CORE,
  log,
  median,
  table,
  TARGETS,
} from './harness.mjs';

const beforeRef = arg('--before', undefined);
const ROUNDS = Number(arg('--rounds', '3'));
const SECONDS = Number(arg('--seconds', '4'));
const TOGETHER = process.argv.includes('--together');
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const HIT_NUMBER = '+442079460010';
const CONTRACT = "bare node:http, the search's fields and log line";
const STOCK = 'stock parts (Hono, hono/jwt, pino, LRUCache…)';
const THIS = 'this build';
const TRACED = 'this build, tracing on (ratio 1.0)';
const DOWN = `${TRACED}, collector down`;
const BLACK_HOLED = `${TRACED}, collector black-holed`;
/** OTEL_EXPORTER_OTLP_TIMEOUT of the traced gateways: short, so the black-holed exports time out within every round. */
const EXPORT_TIMEOUT_MS = '1000';
/** The reference servers: no target, no before, for them. */
const REFERENCES = new Set(['bare node:http', CONTRACT, STOCK]);
const { canPin, cpuUs, startChild, withCpu, wrk } = createHarness();

build();
const baselineScript = beforeRef === undefined ? null : buildBaseline(beforeRef);
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });

const prefix = `bench-hit-${process.pid}`;
const env = benchGatewayEnv(simulator.url);
const servers = {};
servers[THIS] = await startChild('servers/gateway.mjs', { ...env, REDIS_URL: '' });
servers['this build, REDIS_URL'] = await startChild('servers/gateway.mjs', {
  ...env,
  REDIS_URL,
  REDIS_KEY_PREFIX: prefix,
});
/** Resolves with `server` listening on a free loopback port. */
function listening(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
/** This build without Redis, every trace recorded and exported to the collector at `port` on loopback. */
function startTraced(port) {
  return startChild('servers/gateway.mjs', {
    ...env,
    REDIS_URL: '',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`,
    OTEL_EXPORTER_OTLP_TIMEOUT: EXPORT_TIMEOUT_MS,
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '1',
  });
}
/** The sum of the series of the counter `name` in a /metrics text. */
function metricTotal(text, name) {
  const series = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm');
  return [...text.matchAll(series)].reduce((sum, m) => sum + Number(m[1]), 0);
}
// Tracing on, every trace recorded (no caller's traceparent): each hit's server span is queued, encoded and sent to
// a collector of the bench's own. The live one reads each export request and answers 200, counting them and their
// bytes; the black-holed one accepts and reads each connection and never answers, so every export waits out
// EXPORT_TIMEOUT_MS; for the down one, a port that was free a moment ago and is closed again refuses every connection.
const collected = { requests: 0, bytes: 0 };
const collector = await listening(
  createServer((req, res) => {
    collected.requests++;
    req.on('data', (chunk) => (collected.bytes += chunk.length));
    req.on('end', () => res.end());
  }),
);
const blackHole = await listening(createTcpServer((socket) => socket.resume().on('error', () => {})));
const closed = await listening(createTcpServer());
const closedPort = closed.address().port;
closed.close();
servers[TRACED] = await startTraced(collector.address().port);
servers[DOWN] = await startTraced(closedPort);
servers[BLACK_HOLED] = await startTraced(blackHole.address().port);
if (baselineScript !== null)
  servers[`before (${beforeRef})`] = await startChild(baselineScript, { ...env, REDIS_URL: '' });

const hitPath = `/v2/contacts/search?what=${encodeURIComponent(HIT_NUMBER)}`;
const tokens = {};
let body;
for (const [name, s] of Object.entries(servers)) {
  const login = await fetch(`${s.url}/token/login`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: 'bench',
      client_secret: BENCH_CLIENT_SECRET,
    }),
  });
  tokens[name] = (await login.json()).access_token;
  const first = await fetch(`${s.url}${hitPath}`, { headers: { authorization: `Bearer ${tokens[name]}` } });
  body = await first.text();
  if (first.status !== 200) throw new Error(`${name} answered ${first.status}: ${body}`);
}
const bodyFile = join(mkdtempSync(join(tmpdir(), 'callerid-bench-')), 'body.json');
writeFileSync(bodyFile, body);
servers['bare node:http'] = await startChild('servers/bare-node.mjs', {
  BENCH_BODY_FILE: bodyFile,
  BENCH_NUMBER: HIT_NUMBER,
});
tokens['bare node:http'] = '';
// The same body with the search's header fields and access-log line, without the gateway's logic: the floor for an
// answer that keeps the contract (bench/servers/bare-node-contract.mjs).
servers[CONTRACT] = await startChild('servers/bare-node-contract.mjs', {
  BENCH_BODY_FILE: bodyFile,
  BENCH_NUMBER: HIT_NUMBER,
});
tokens[CONTRACT] = '';
// The same job from stock parts (bench/servers/stock-parts.mjs): it verifies this build's token with the same secret.
servers[STOCK] = await startChild('servers/stock-parts.mjs', {
  ...env,
  BENCH_BODY_FILE: bodyFile,
  BENCH_NUMBER: HIT_NUMBER,
});
tokens[STOCK] = tokens[THIS];

const names = Object.keys(servers);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (const name of names)
  await wrk({
    url: servers[name].url,
    script: 'fixed.lua',
    connections: 50,
    seconds: 1,
    env: { BENCH_PATH: hitPath, BENCH_TOKEN: tokens[name] },
  });
const load = (name) =>
  wrk({
    url: servers[name].url,
    script: 'fixed.lua',
    connections: 50,
    seconds: SECONDS,
    env: { BENCH_PATH: hitPath, BENCH_TOKEN: tokens[name] },
  });
for (let round = 0; round < ROUNDS; round++) {
  if (TOGETHER) {
    // Every server under its own wrk at the same moment, sharing the server core: what the machine's speed does
    // during the round it does to all of them, so their ratios hold where one-after-another rounds drift.
    // The wrk started first changes every round: a server loaded a moment longer alone costs more per request.
    const order = names.map((_, k) => names[(k + round) % names.length]);
    log(`hit c=50 round ${round + 1}/${ROUNDS}: all at once`);
    const before = order.map((n) => cpuUs(servers[n].child.pid));
    const results = await Promise.all(order.map(load));
    order.forEach((n, i) => {
      results[i].cpuPerReq = (cpuUs(servers[n].child.pid) - before[i]) / results[i].requests;
      runs[n].push(results[i]);
    });
    continue;
  }
  const order = round % 2 === 0 ? names : [...names].reverse();
  log(`hit c=50 round ${round + 1}/${ROUNDS}: ${order.join(', ')}`);
  for (const name of order) runs[name].push(await withCpu(servers[name].child.pid, () => load(name)));
}

const summary = Object.fromEntries(
  names.map((n) => [
    n,
    {
      rps: median(runs[n].map((r) => r.rps)),
      p50: median(runs[n].map((r) => r.p50)),
      p99: median(runs[n].map((r) => r.p99)),
      cpu: median(runs[n].map((r) => r.cpuPerReq)),
      bad: runs[n].reduce((k, r) => k + r.errors + r.non2xx, 0),
    },
  ]),
);
const before = baselineScript === null ? undefined : summary[`before (${beforeRef})`];
const bare = summary['bare node:http'];
const stock = summary[STOCK];
const ratio = (a, b) => (b === undefined ? '' : `${(a / b).toFixed(2)}x`);
const rows = [
  [
    'hit c=50',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'CPU: bare node / this',
    'CPU vs stock parts',
    'CPU/req vs before',
    'req/s vs before',
    'req/s vs bare node',
    'non-2xx/errors',
  ],
];
const met = (value, ok) => `${value}${ok ? ' (met)' : ' (not met)'}`;
for (const n of names) {
  const s = summary[n];
  rows.push([
    n,
    s.rps.toFixed(0),
    (s.p50 / 1000).toFixed(2),
    (s.p99 / 1000).toFixed(2),
    s.cpu.toFixed(1),
    n === 'bare node:http'
      ? ''
      : REFERENCES.has(n)
        ? (bare.cpu / s.cpu).toFixed(2)
        : met(`${(bare.cpu / s.cpu).toFixed(2)}`, bare.cpu / s.cpu >= TARGETS.hitCpuRatio),
    n === STOCK ? '' : ratio(s.cpu, stock.cpu),
    before && !REFERENCES.has(n) ? ratio(s.cpu, before.cpu) : '',
    before && !REFERENCES.has(n) ? ratio(s.rps, before.rps) : '',
    n === 'bare node:http' ? '' : ratio(s.rps, bare.rps),
    String(s.bad),
  ]);
}
process.stdout.write(
  `\nhit path at 50 connections, medians of ${ROUNDS} rounds of ${SECONDS} s, ${TOGETHER ? 'all servers loaded at once' : 'alternating order'} (${new Date().toISOString()}, node ${process.version}; ` +
    `${canPin ? 'servers on core 0, wrk on core 1' : 'not pinned'}; target: bare node / this >= ${TARGETS.hitCpuRatio} by CPU/req)\n${table(rows)}\n` +
    `stock parts: ${stock.cpu.toFixed(1)} µs CPU/hit; this build needs ${ratio(summary[THIS].cpu, stock.cpu)} of it ` +
    `(stock parts / this build ${(stock.cpu / summary[THIS].cpu).toFixed(2)}x)\n`,
);

// Against tracing off: this build's other rows and the before, with the spans each traced gateway counted as dropped
// (its own /metrics, read after the load: the queue was full or the export failed) and the requests it served.
const counts = Object.fromEntries(
  await Promise.all(
    [TRACED, DOWN, BLACK_HOLED].map(async (n) => {
      const text = await (await fetch(`${servers[n].url}/metrics`)).text();
      const served = metricTotal(text, 'callerid_gateway_http_requests_total');
      return [n, { served, dropped: metricTotal(text, 'callerid_gateway_trace_spans_dropped_total') }];
    }),
  ),
);
const off = summary[THIS];
const live = summary[TRACED];
const tracing = [
  [
    'against this build (tracing off)',
    'p50 ms',
    'req/s',
    'CPU µs/req',
    'p50 vs tracing off',
    'req/s vs tracing off',
    'CPU/req vs tracing off',
    'p50 vs live collector',
    'CPU/req vs live collector',
    'requests served',
    'spans dropped',
  ],
];
for (const n of names.filter((name) => !REFERENCES.has(name))) {
  const s = summary[n];
  const failing = n === DOWN || n === BLACK_HOLED;
  tracing.push([
    n,
    (s.p50 / 1000).toFixed(2),
    s.rps.toFixed(0),
    s.cpu.toFixed(1),
    n === THIS ? '' : ratio(s.p50, off.p50),
    n === THIS ? '' : ratio(s.rps, off.rps),
    n === THIS ? '' : ratio(s.cpu, off.cpu),
    failing ? ratio(s.p50, live.p50) : '',
    failing ? ratio(s.cpu, live.cpu) : '',
    counts[n]?.served ?? '',
    counts[n]?.dropped ?? '',
  ]);
}
process.stdout.write(
  `
${table(tracing)}
` +
    `live collector: ${collected.requests} export requests, ${(collected.bytes / 1e6).toFixed(1)} MB ` +
    `(${(counts[TRACED].served / collected.requests).toFixed(0)} requests served per export request; a full batch is 512 spans); ` +
    `export timeout ${EXPORT_TIMEOUT_MS} ms\n`,
);

for (const s of Object.values(servers)) s.child.send({ type: 'stop' });
await simulator.close();
collector.close();
blackHole.close();
const { Redis } = await import('ioredis');
const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
try {
  await redis.connect();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
} catch {
  // The keys expire by themselves; a bench must not fail on its clean-up.
}
redis.disconnect();
setTimeout(() => process.exit(0), 500).unref();
