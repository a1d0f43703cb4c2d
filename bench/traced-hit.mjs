// `node bench/traced-hit.mjs [--before <ref>] [--rounds N] [--seconds S] [--warm S] [--together] [--paced MS] [--no-build]`
// [--no-worker] (`npm run bench:traced`): what tracing costs a cache hit, every row in one run: this build on Node
// untraced, with every trace recorded (ratio 1.0) and with a tenth recorded (0.1), each traced gateway exporting over
// OTLP/HTTP (protobuf) to a live collector of its own that reads every export and answers 200; the same three for the
// Worker build under `workerd serve` (test/helpers/workerd-serve.mjs; its CPU is workerd's); beside them the stock-parts peer
// (servers/stock-parts.mjs) untraced and traced with OpenTelemetry's own parts (@hono/otel, sdk-trace-base's batch
// processor, the OTLP proto exporter) at the same two ratios, to the same kind of collector. The table gives each
// traced row's server CPU per hit against its own untraced row (the targets: 1.25x at 1.0, 1.05x at 0.1) and, with
// --before, this build's untraced hit against the baseline and the baseline's own traced rows; beside the CPU, its user-space share (the kernel's share of a
// saturated hit grows as a server slows: each answer then wakes an idle client). Rounds alternate the order;
// --together loads all servers at once (ratios that hold when the machine's speed drifts); --paced MS has each
// connection wait MS after every answer, so every row serves about the same rate. Loopback only; servers on core 0,
// wrk on core 1.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWorkerdLike } from '../test/helpers/workerd-serve.mjs';
import {
  arg,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  benchLogin,
  build,
  buildBaseline,
  createHarness,
  LOAD_CORE,
  log,
  SERVER_CORE,
  median,
  table,
} from './harness.mjs';

const beforeRef = arg('--before', undefined);
const ROUNDS = Number(arg('--rounds', '5'));
const SECONDS = Number(arg('--seconds', '4'));
/** Seconds of load each server takes before the rounds: V8's tiers settle over the first tens of thousands of hits. */
const WARM_SECONDS = Number(arg('--warm', '5'));
const TOGETHER = process.argv.includes('--together');
const HIT_NUMBER = '+442079460010';
const HIT_PATH = `/v2/contacts/search?what=${encodeURIComponent(HIT_NUMBER)}`;
/** Each traced row's untraced peer and the most its CPU per hit may be of that peer's. */
const TARGET = { 1: 1.25, 0.1: 1.05 };
/** With `--paced MS`, each connection waits MS after an answer: every row asks at about the same rate. */
const PACE_MS = arg('--paced', undefined);
const { canPin, startChild, withCpu, wrk } = createHarness();
const NO_WORKER = process.argv.includes('--no-worker');

build();
const baselineScript = beforeRef === undefined ? null : buildBaseline(beforeRef);
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const env = benchGatewayEnv(simulator.url);

/** A collector on loopback that reads every export request and answers 200, counting requests and bytes. */
function startCollector() {
  const counts = { requests: 0, bytes: 0 };
  const server = createServer((req, res) => {
    counts.requests++;
    req.on('data', (chunk) => (counts.bytes += chunk.length));
    req.on('end', () => res.end());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, counts, url: `http://127.0.0.1:${server.address().port}` })),
  );
}

/** The OpenTelemetry environment of a server whose traces go to `collector` at `ratio`. */
const tracedEnv = (collector, ratio) => ({
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces`,
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: String(ratio),
});

// Every row: its server (a URL, a process whose CPU is counted, a stop), the untraced row it is set against, its
// ratio, its collector.
const rows = [];
async function addRow(name, script, rowEnv, { peer, ratio, collector } = {}) {
  const { child, url } = await startChild(script, { ...env, REDIS_URL: '', ...rowEnv });
  const server = { url, pid: child.pid, stop: () => child.send({ type: 'stop' }) };
  rows.push({ name, server, peer, ratio, collector, runs: [] });
}
/** The Worker build under `workerd serve` (one isolate), pinned like the Node servers. */
async function addWorkerRow(name, rowEnv, options = {}) {
  const workerd = await startWorkerdLike({ ...env, ...rowEnv }, canPin ? ['taskset', '-c', SERVER_CORE] : []);
  const server = { url: workerd.url, pid: workerd.pid, stop: () => workerd.close() };
  rows.push({ name, server, runs: [], ...options });
}
const THIS = 'this build, untraced';
await addRow(THIS, 'servers/gateway.mjs', {});
for (const ratio of [1, 0.1]) {
  const collector = await startCollector();
  await addRow(`this build, ${ratio.toFixed(1)} traced`, 'servers/gateway.mjs', tracedEnv(collector, ratio), {
    peer: THIS,
    ratio,
    collector,
  });
}
// The same at 1.0 in export requests of 2,048 spans (a queue of 8,192): what the batch size alone is worth.
{
  const collector = await startCollector();
  await addRow(
    'this build, 1.0 traced, batches of 2,048',
    'servers/gateway.mjs',
    { ...tracedEnv(collector, 1), OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2048', OTEL_BSP_MAX_QUEUE_SIZE: '8192' },
    { peer: THIS, ratio: 1, collector },
  );
}
if (baselineScript !== null) {
  const BEFORE = `before (${beforeRef}), untraced`;
  await addRow(BEFORE, baselineScript, {});
  rows[0].peer = BEFORE;
  for (const ratio of [1, 0.1]) {
    const collector = await startCollector();
    await addRow(`before (${beforeRef}), ${ratio.toFixed(1)} traced`, baselineScript, tracedEnv(collector, ratio), {
      peer: BEFORE,
      ratio,
      collector,
    });
  }
}

if (!NO_WORKER) {
  const WORKER = 'the Worker (workerd serve), untraced';
  await addWorkerRow(WORKER, {});
  for (const ratio of [1, 0.1]) {
    const collector = await startCollector();
    await addWorkerRow(`the Worker (workerd serve), ${ratio.toFixed(1)} traced`, tracedEnv(collector, ratio), {
      peer: WORKER,
      ratio,
      collector,
    });
  }
}

// The stock-parts peer answers with the gateway's body; it verifies this build's token with the same secret.
const token = await benchLogin(rows[0].server.url);
const first = await fetch(`${rows[0].server.url}${HIT_PATH}`, { headers: { authorization: `Bearer ${token}` } });
const bodyFile = join(mkdtempSync(join(tmpdir(), 'callerid-bench-')), 'body.json');
writeFileSync(bodyFile, await first.text());
const stockEnv = { BENCH_BODY_FILE: bodyFile, BENCH_NUMBER: HIT_NUMBER };
const STOCK = 'stock parts, untraced';
await addRow(STOCK, 'servers/stock-parts.mjs', stockEnv);
for (const ratio of [1, 0.1]) {
  const collector = await startCollector();
  await addRow(
    `stock parts + OpenTelemetry SDK, ${ratio.toFixed(1)} traced`,
    'servers/stock-parts.mjs',
    { ...stockEnv, ...tracedEnv(collector, ratio) },
    { peer: STOCK, ratio, collector },
  );
}

for (const row of rows) {
  row.token = row.name.startsWith('stock') ? token : await benchLogin(row.server.url);
  const res = await fetch(`${row.server.url}${HIT_PATH}`, { headers: { authorization: `Bearer ${row.token}` } });
  if (res.status !== 200) throw new Error(`${row.name} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}
const load = (row, seconds) =>
  wrk({
    url: row.server.url,
    script: PACE_MS === undefined ? 'fixed.lua' : 'paced.lua',
    connections: 50,
    seconds,
    env: { BENCH_PATH: HIT_PATH, BENCH_TOKEN: row.token, BENCH_DELAY_MS: PACE_MS ?? '' },
  });
for (const row of rows) await load(row, WARM_SECONDS);
for (const row of rows) if (row.collector) Object.assign(row.collector.counts, { requests: 0, bytes: 0 });

for (let round = 0; round < ROUNDS; round++) {
  if (TOGETHER) {
    log(`round ${round + 1}/${ROUNDS}: all at once`);
    const results = await Promise.all(rows.map((row) => withCpu(row.server.pid, () => load(row, SECONDS))));
    rows.forEach((row, i) => row.runs.push(results[i]));
    continue;
  }
  const order = round % 2 === 0 ? rows : [...rows].reverse();
  log(`round ${round + 1}/${ROUNDS}: ${order.map((row) => row.name).join(', ')}`);
  for (const row of order) row.runs.push(await withCpu(row.server.pid, () => load(row, SECONDS)));
}

const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
for (const row of rows) {
  row.cpu = median(row.runs.map((r) => r.cpuPerReq));
  row.user = median(row.runs.map((r) => r.userPerReq));
  row.rps = median(row.runs.map((r) => r.rps));
  row.p50 = median(row.runs.map((r) => r.p50));
  row.served = row.runs.reduce((sum, r) => sum + r.requests, 0);
  row.bad = row.runs.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
}
const header = [
  'hit c=50',
  'req/s',
  'p50 ms',
  'CPU µs/hit',
  'of it user',
  'CPU vs (middle half)',
  'user vs',
  'against',
  'target',
  'export requests',
  'spans per export',
  'bytes per hit',
  'non-2xx/errors',
];
/**
 * A row's CPU per hit against its peer's, taken round by round (both measured in the same round, so the machine's
 * drift between rounds cancels): the median and the middle half of the rounds.
 */
function pairedRatio(row, peer, key) {
  const ratios = row.runs.map((r, i) => r[key] / peer.runs[i][key]).sort((a, b) => a - b);
  const at = (q) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))];
  return { median: median(ratios), low: at(0.25), high: at(0.75) };
}
const lines = rows.map((row) => {
  const peer = row.peer === undefined ? undefined : byName[row.peer];
  const paired = peer === undefined ? undefined : pairedRatio(row, peer, 'cpuPerReq');
  const vs = paired?.median;
  const target = TARGET[row.ratio];
  const exported = row.collector?.counts;
  return [
    row.name,
    row.rps.toFixed(0),
    (row.p50 / 1000).toFixed(2),
    row.cpu.toFixed(1),
    row.user.toFixed(1),
    paired === undefined ? '' : `${vs.toFixed(3)}x (${paired.low.toFixed(3)}–${paired.high.toFixed(3)})`,
    peer === undefined ? '' : `${pairedRatio(row, peer, 'userPerReq').median.toFixed(3)}x`,
    row.peer ?? '',
    target === undefined ? '' : `≤ ${target}x ${vs <= target ? '(met)' : '(not met)'}`,
    exported ? String(exported.requests) : '',
    exported ? (exported.requests ? ((row.served * row.ratio) / exported.requests).toFixed(0) : '0') : '',
    exported ? (exported.bytes / row.served).toFixed(0) : '',
    String(row.bad),
  ];
});
process.stdout.write(
  `\ntraced hit at 50 connections, medians of ${ROUNDS} rounds of ${SECONDS} s, ` +
    `${TOGETHER ? 'all servers loaded at once' : 'alternating order'}${PACE_MS === undefined ? ', saturated' : `, paced: ${PACE_MS} ms after each answer`} (${new Date().toISOString()}, node ${process.version}; ` +
    `${canPin ? 'servers on core 0, wrk on core 1' : 'not pinned'}; CPU vs: the median of the rounds' ratios to the row's peer measured in the same round; ` +
    `spans per export: recorded hits (served × ratio) per export request)\n` +
    `${table([header, ...lines])}\n`,
);

await Promise.all(rows.map((row) => row.server.stop()));
for (const row of rows) row.collector?.server.close();
await simulator.close();
setTimeout(() => process.exit(0), 500).unref();
