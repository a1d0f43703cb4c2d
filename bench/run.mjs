// `npm run bench`: builds, then measures in one run, side by side: the hit path (gateway vs bare node:http vs
// bare Hono), the miss path (gateway vs the simulator directly), coalescing, memory, and the upstream transports;
// then the replicas bench, the hit bench with its stock-parts row and, beside a baseline, the miss bench.
// Traffic goes to 127.0.0.1 only; every phase is bounded in time or count. Load generator: wrk (Lua scripts in
// bench/lua); servers on core 0 and load on core 1 with taskset where it exists.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BENCH_CLIENT_SECRET,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  build,
  createHarness,
  here,
  LOAD_CORE,
  log,
  root,
  SERVER_CORE,
  syntheticDirectory,
  DEFAULT_BASELINE,
  TARGETS,
} from './harness.mjs';

const quick = process.argv.includes('--quick');
// --quick (under a minute, for a check that everything runs; its figures are rough): shorter phases, a smaller
// memory fill, no transport comparison, the replicas bench quick, no baseline build.
const HIT_SECONDS = quick ? 2 : 6;
const MISS_SECONDS = quick ? 1 : 4;
const WARM_SECONDS = 1;
const FILL_NUMBERS = quick ? 5_000 : 200_000;
const HIT_NUMBER = '+442079460010';
const COALESCE_NUMBER = '+442079460999';
const COALESCE_REQUESTS = 1000;
const { canPin, pinned, children, startChild, ask, withCpu, wrk } = createHarness();

// --- build ------------------------------------------------------------------------------------------------
build();

// The runner hosts the simulator and shares the load core with wrk, away from the servers measured.
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });

const { startSimulatorServer } = await import('../dist/simulator/server.js');
const { DIRECTORY_ENTRIES, PROVIDERS } = await import('../dist/simulator/directory.js');

// --- set-up ---------------------------------------------------------------------------------------------------
const started = Date.now();
log('starting the simulator (with synthetic listings) and the servers');
const simulator = await startSimulatorServer({
  clients: BENCH_UPSTREAM_CLIENTS,
  directory: [...DIRECTORY_ENTRIES, ...syntheticDirectory(FILL_NUMBERS + 100_000, PROVIDERS.swissdir)],
});
const clientSecret = BENCH_CLIENT_SECRET;
const gatewayEnv = benchGatewayEnv(simulator.url);
const gateway = await startChild('servers/gateway.mjs', gatewayEnv);
const login = await fetch(`${gateway.url}/token/login`, {
  method: 'POST',
  body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'bench', client_secret: clientSecret }),
});
const token = (await login.json()).access_token;
const hitPath = `/v2/contacts/search?what=${encodeURIComponent(HIT_NUMBER)}`;
const first = await fetch(`${gateway.url}${hitPath}`, { headers: { authorization: `Bearer ${token}` } });
const body = await first.text();
if (first.status !== 200) throw new Error(`gateway answered ${first.status}: ${body}`);
const bodyFile = join(mkdtempSync(join(tmpdir(), 'callerid-bench-')), 'body.json');
writeFileSync(bodyFile, body);
const bareEnv = { BENCH_BODY_FILE: bodyFile, BENCH_NUMBER: HIT_NUMBER };
const bareNode = await startChild('servers/bare-node.mjs', bareEnv);
const bareHono = await startChild('servers/bare-hono.mjs', bareEnv);

// --- hit path -------------------------------------------------------------------------------------------------
const hit = {};
for (const [name, server, tok] of [
  ['gateway', gateway, token],
  ['bare node:http', bareNode, ''],
  ['bare Hono', bareHono, ''],
]) {
  log(`hit path: ${name}`);
  const env = { BENCH_PATH: hitPath, BENCH_TOKEN: tok };
  await wrk({ url: server.url, script: 'fixed.lua', connections: 50, seconds: WARM_SECONDS, env });
  hit[name] = await withCpu(server.child.pid, () =>
    wrk({ url: server.url, script: 'fixed.lua', connections: 50, seconds: HIT_SECONDS, env }),
  );
}
const baseline = await ask(gateway.child, 'memory');
if (process.argv.includes('--hit-only')) {
  for (const [name, r] of Object.entries(hit))
    log(
      `${name.padEnd(16)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${(r.p50 / 1000).toFixed(2)} ms  p99 ${(r.p99 / 1000).toFixed(2)} ms  ${r.cpuPerReq.toFixed(1)} µs CPU/req`,
    );
  log(
    `gateway/bare node ${(hit.gateway.rps / hit['bare node:http'].rps).toFixed(2)}x (CPU ${(hit['bare node:http'].cpuPerReq / hit.gateway.cpuPerReq).toFixed(2)}x)  gateway/bare Hono ${(hit.gateway.rps / hit['bare Hono'].rps).toFixed(2)}x (CPU ${(hit['bare Hono'].cpuPerReq / hit.gateway.cpuPerReq).toFixed(2)}x)`,
  );
  for (const child of children) child.send({ type: 'stop' });
  await simulator.close();
  process.exit(0);
}

// --- miss path ------------------------------------------------------------------------------------------------
const miss = {};
const missEnv = (start, tok, limit = 0) => ({
  BENCH_START: String(start),
  BENCH_LIMIT: String(limit),
  BENCH_TOKEN: tok,
  BENCH_BASE_PATH: '/v2/contacts/search',
});
// The simulator needs its own upstream token for direct calls.
const simToken = (
  await (
    await fetch(`${simulator.url}/token/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'bench-gateway',
        client_secret: 'bench-upstream-secret',
      }),
    })
  ).json()
).access_token;
// Low concurrency: the same fresh numbers (never seen by the gateway) both ways.
const LOW_START = FILL_NUMBERS;
log('miss path: 1 connection, simulator directly, then through the gateway');
// For the latency at 1 connection the simulator (this process) sits on the server core beside the gateway:
// then the client crosses cores once each way on both paths, and the difference is what the gateway adds
// rather than two extra cross-core wake-ups (the simulator stands for an upstream on another host).
if (canPin) spawnSync('taskset', ['-cp', SERVER_CORE, String(process.pid)], { stdio: 'ignore' });
// A second of other fresh numbers first, as bench/miss.mjs does: the figure is a steady miss, not V8 compiling the
// miss path on its first thousands of requests after the hit phase.
await wrk({
  url: gateway.url,
  script: 'distinct.lua',
  connections: 1,
  seconds: WARM_SECONDS,
  env: missEnv(LOW_START + 50_000, token),
});
miss.directC1 = await withCpu(process.pid, () =>
  wrk({
    url: simulator.url,
    script: 'distinct.lua',
    connections: 1,
    seconds: MISS_SECONDS,
    env: missEnv(LOW_START, simToken),
  }),
);
miss.gatewayC1 = await withCpu(gateway.child.pid, () =>
  wrk({
    url: gateway.url,
    script: 'distinct.lua',
    connections: 1,
    seconds: MISS_SECONDS,
    env: missEnv(LOW_START, token),
  }),
);
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
log('miss path: 50 connections, simulator directly, then through the gateway (which starts filling the cache)');
miss.directC50 = await wrk({
  url: simulator.url,
  script: 'distinct.lua',
  connections: 50,
  seconds: MISS_SECONDS,
  env: missEnv(0, simToken),
});
simulator.controls.resetStats();
miss.gatewayC50 = await withCpu(gateway.child.pid, () =>
  wrk({ url: gateway.url, script: 'distinct.lua', connections: 50, seconds: MISS_SECONDS, env: missEnv(0, token) }),
);

// --- memory: fill to FILL_NUMBERS distinct numbers --------------------------------------------------------------
const filledSoFar = miss.gatewayC50.requests;
if (filledSoFar < FILL_NUMBERS) {
  log(`memory: caching ${FILL_NUMBERS - filledSoFar} more distinct numbers`);
  await wrk({
    url: gateway.url,
    script: 'distinct.lua',
    connections: 50,
    // The script stops at the count; the duration only bounds a slow run (in --quick it ends the phase).
    seconds: quick ? 10 : 120,
    env: missEnv(filledSoFar, token, FILL_NUMBERS - filledSoFar),
  });
}
const fillCalls = simulator.controls.stats().searchCalls;
const filled = await ask(gateway.child, 'memory');

// --- coalescing -------------------------------------------------------------------------------------------------
log(`coalescing: ${COALESCE_REQUESTS} concurrent requests for one uncached number`);
simulator.controls.setFaults({ latencyMs: 1000 });
simulator.controls.resetStats();
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const coalesceStarted = performance.now();
const statuses = await Promise.all(
  Array.from(
    { length: COALESCE_REQUESTS },
    () =>
      new Promise((resolve, reject) => {
        const req = httpRequest(
          `${gateway.url}/v2/contacts/search?what=${encodeURIComponent(COALESCE_NUMBER)}`,
          { agent, headers: { authorization: `Bearer ${token}` } },
          (res) => {
            res.resume();
            res.on('end', () =>
              resolve(`${res.statusCode} ${String(res.headers['cache-status']).replace(/; ttl=.*/, '')}`),
            );
          },
        );
        req.on('error', reject);
        req.end();
      }),
  ),
);
const coalesceSeconds = (performance.now() - coalesceStarted) / 1000;
const coalesceCalls = simulator.controls.stats().searchCalls;
simulator.controls.setFaults({ latencyMs: 0 });
const coalesceKinds = {};
for (const s of statuses) coalesceKinds[s] = (coalesceKinds[s] ?? 0) + 1;

// --- transports ---------------------------------------------------------------------------------------------------
let transport = {};
if (!quick) {
  log('transports: global fetch vs undici vs node:http, client on core 0, bare server on core 1');
  const transportServer = await startChild('servers/bare-node.mjs', bareEnv, LOAD_CORE);
  transport = await new Promise((resolve, reject) => {
    const [cmd, args] = pinned(SERVER_CORE, process.execPath, [
      join(here, 'transport.mjs'),
      transportServer.url,
      HIT_NUMBER,
      quick ? '1' : '1.5',
    ]);
    const proc = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
      if (line) resolve(JSON.parse(line.slice(11)));
      else reject(new Error(`transport bench failed:\n${out}`));
    });
  });
}

// --- report ---------------------------------------------------------------------------------------------------------
const ms = (us) => (us / 1000).toFixed(2);
const MiB = (b) => (b / 1024 / 1024).toFixed(1);
const rows = [];
const row = (...cells) => rows.push(cells);
row('measure', 'value', 'p50 ms', 'p99 ms', 'note');
const [g, n, h] = [hit.gateway, hit['bare node:http'], hit['bare Hono']];
const cpu = (r) => `${r.cpuPerReq.toFixed(1)} µs CPU/req`;
row('hit: gateway', `${g.rps.toFixed(0)} req/s`, ms(g.p50), ms(g.p99), `${cpu(g)}; ${g.non2xx + g.errors} errors`);
row('hit: bare node:http (Map)', `${n.rps.toFixed(0)} req/s`, ms(n.p50), ms(n.p99), cpu(n));
row('hit: bare Hono (Map)', `${h.rps.toFixed(0)} req/s`, ms(h.p50), ms(h.p99), cpu(h));
row(
  'hit: gateway / bare node',
  `${(g.rps / n.rps).toFixed(2)}x req/s`,
  '',
  `${(g.p99 / n.p99).toFixed(2)}x p99`,
  `${(n.cpuPerReq / g.cpuPerReq).toFixed(2)}x by CPU/req; target >= ${TARGETS.hitCpuRatio}x`,
);
row(
  'hit: gateway / bare Hono',
  `${(g.rps / h.rps).toFixed(2)}x req/s`,
  '',
  `${(g.p99 / h.p99).toFixed(2)}x p99`,
  `${(h.cpuPerReq / g.cpuPerReq).toFixed(2)}x by CPU/req`,
);
row(
  'hit: bare Hono / bare node',
  `${(h.rps / n.rps).toFixed(2)}x req/s`,
  '',
  `${(h.p99 / n.p99).toFixed(2)}x p99`,
  `${(n.cpuPerReq / h.cpuPerReq).toFixed(2)}x by CPU/req: the adapter's own cost`,
);
const { directC1: d1, gatewayC1: g1, directC50: d50, gatewayC50: g50 } = miss;
row('miss c=1: simulator directly', `${d1.rps.toFixed(0)} req/s`, ms(d1.p50), ms(d1.p99), `simulator ${cpu(d1)}`);
row(
  'miss c=1: through the gateway',
  `${g1.rps.toFixed(0)} req/s`,
  ms(g1.p50),
  ms(g1.p99),
  `gateway ${g1.cpuPerReq.toFixed(0)} µs CPU/miss; target <= ${TARGETS.missCpuUs}`,
);
row(
  'miss c=1: added by the gateway',
  '',
  ms(g1.p50 - d1.p50),
  ms(g1.p99 - d1.p99),
  `target p50 <= ${TARGETS.missAddedP50Ms} ms`,
);
row('miss c=50: simulator directly', `${d50.rps.toFixed(0)} req/s`, ms(d50.p50), ms(d50.p99), '');
row(
  'miss c=50: through the gateway',
  `${g50.rps.toFixed(0)} req/s`,
  ms(g50.p50),
  ms(g50.p99),
  `gateway ${cpu(g50)}; ${g50.non2xx + g50.errors} errors`,
);
row(
  `coalescing: ${COALESCE_REQUESTS} concurrent, 1 number`,
  `${coalesceCalls} upstream call(s)`,
  '',
  '',
  `target 1; ${coalesceSeconds.toFixed(2)} s; ${Object.entries(coalesceKinds)
    .map(([k, v]) => `${v}x ${k.replace('callerid-gateway; ', '')}`)
    .join(', ')}`,
);
const grown = filled.rss - baseline.rss;
row(
  `memory: after ${FILL_NUMBERS} distinct numbers`,
  `RSS ${MiB(filled.rss)} MiB`,
  '',
  '',
  `+${MiB(grown)} MiB over baseline ${MiB(baseline.rss)} MiB; limit CACHE_MAX_BYTES ${MiB(filled.maxBytes)} + 64 MiB; ${filled.entries} entries, ${MiB(filled.bytes)} MiB counted, heap used +${MiB(filled.heapUsed - baseline.heapUsed)} MiB, heap committed +${MiB(filled.heapTotal - baseline.heapTotal)} MiB, external +${MiB(filled.external - baseline.external)} MiB; ${fillCalls} upstream calls`,
);
for (const [name, r] of Object.entries(transport)) {
  row(
    `upstream transport: ${name}`,
    `${r.c50.rps.toFixed(0)} req/s c=50`,
    r.c1.p50.toFixed(3),
    r.c1.p99.toFixed(3),
    `${r.c1.rps.toFixed(0)} req/s c=1 (latency at c=1)`,
  );
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
const out = [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)];
process.stdout.write(
  `\ncallerid-gateway bench (${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores, ` +
    `${canPin ? 'servers on core 0, load on core 1' : 'not pinned'}, wrk -t1, hit/miss c=50 unless noted)\n${out.join('\n')}\n` +
    `total ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);

for (const child of children) child.send({ type: 'stop' });
await simulator.close();
// The replicas scenario (bench/replicas.mjs) is part of the bench: its own processes, after these are gone.
if (!process.argv.includes('--no-replicas')) {
  await new Promise((resolve) => setTimeout(resolve, 500));
  spawnSync(
    process.execPath,
    [join(here, 'replicas.mjs'), '--no-build', ...process.argv.slice(2).filter((a) => a === '--quick')],
    { cwd: root, stdio: 'inherit' },
  );
}
// The hit bench (bench/hit.mjs: bare node:http, the contract's floor, stock parts, this build) and, beside a baseline,
// the miss bench (bench/miss.mjs): this build beside the build of an earlier commit, by default DEFAULT_BASELINE
// (bench/baselines.mjs); `--before <name or ref>` picks another, `--no-before` runs the hit bench without one.
// `--miss-before <ref>` is the older spelling. --quick runs the hit bench short and without a baseline (building one
// takes minutes); `--rounds N` and `--seconds S` pass through to both scripts.
const beforeAt = Math.max(process.argv.indexOf('--before'), process.argv.indexOf('--miss-before'));
const beforeRef =
  process.argv.includes('--no-before') || (quick && beforeAt === -1)
    ? undefined
    : beforeAt === -1
      ? DEFAULT_BASELINE
      : process.argv[beforeAt + 1];
if (beforeRef === undefined) log('hit bench without a baseline; npm run bench:before-after runs one');
const passed = ['--rounds', '--seconds'].flatMap((name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? [] : [name, process.argv[at + 1]];
});
const shortened = quick && passed.length === 0 ? ['--rounds', '1', '--seconds', '2'] : passed;
const before = beforeRef === undefined ? [] : ['--before', beforeRef];
for (const script of beforeRef === undefined ? ['hit.mjs'] : ['hit.mjs', 'miss.mjs'])
  spawnSync(process.execPath, [join(here, script), '--no-build', ...before, ...shortened], {
    cwd: root,
    stdio: 'inherit',
  });
setTimeout(() => process.exit(0), 500).unref();
