// `node bench/log-backpressure.mjs [--before <git-ref>] [--seconds S] [--phases N] [--connections C] [--delay-ms D]
// [--no-build]`: the answer latency of the built gateway (`node dist/runtime/node/main.js`, as the container runs it)
// while its stdout is a pipe whose reader reads, and while it is a pipe whose reader never reads (a stuck log
// collector). Paced concurrent load: C connections each asking for one cached number every D ms (default 10 × 20 ms
// ≈ 500 req/s), in N phases of S seconds so the table shows the latency as the unread backlog grows towards its 8 MiB
// bound. With --before, the gateway built from <ref> (git archive, this checkout's node_modules and tsc) runs at the
// same time under the same load, each with its own pipe and wrk, so a machine whose speed drifts slows both alike;
// the gateway's CPU time per request (from /proc) is the figure that noise moves least.
// After each run the pipe is read to the end, and the search lines delivered plus the lines the `log_lines_dropped`
// warning counts are compared with the searches the gateway's own metrics counted.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  arg,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  benchLogin,
  build,
  createHarness,
  LOAD_CORE,
  log,
  root,
  SERVER_CORE,
  table,
} from './harness.mjs';

const beforeRef = arg('--before', undefined);
const SECONDS = Number(arg('--seconds', '15'));
const PHASES = Number(arg('--phases', '4'));
const CONNECTIONS = Number(arg('--connections', '10'));
const DELAY_MS = Number(arg('--delay-ms', '20'));
const HIT_NUMBER = '+442079460010';
const SEARCH_ROUTE = '/v2/contacts/search';
const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';
const { canPin, cpuUs, pinned, wrk } = createHarness();

build();
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const dir = mkdtempSync(join(tmpdir(), 'callerid-log-bench-'));
const builds = [{ name: 'this build', cwd: root }];
if (beforeRef !== undefined) {
  const cwd = join(dir, 'before');
  log(`building ${beforeRef} in ${cwd}`);
  const archive = spawnSync('sh', [
    '-c',
    `mkdir "${cwd}" && git -C "${root}" archive "${beforeRef}" | tar -x -C "${cwd}"`,
  ]);
  if (archive.status !== 0) throw new Error(`git archive ${beforeRef} failed: ${archive.stderr}`);
  symlinkSync(join(root, 'node_modules'), join(cwd, 'node_modules'), 'dir');
  spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd });
  builds.push({ name: `before (${beforeRef})`, cwd });
}
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const chunk = Buffer.alloc(1 << 20);
let fifos = 0;

/** A FIFO whose read end this process holds (non-blocking); `read` returns the whole lines it holds now. */
function openFifo() {
  const path = join(dir, `stdout-${fifos++}`);
  if (spawnSync('mkfifo', [path]).status !== 0) throw new Error('mkfifo failed');
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY);
  let partial = '';
  return {
    readFd,
    writeFd,
    read() {
      const lines = [];
      for (;;) {
        let n;
        try {
          n = readSync(readFd, chunk, 0, chunk.length, null);
        } catch (err) {
          if (err.code === 'EAGAIN') break;
          throw err;
        }
        if (n === 0) break;
        const parts = (partial + chunk.toString('utf8', 0, n)).split('\n');
        partial = parts.pop();
        lines.push(...parts);
      }
      return lines;
    },
  };
}

const parse = (line) => {
  try {
    return JSON.parse(line);
  } catch {
    return {};
  }
};
const rssMiB = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? (Number(m[1]) / 1024).toFixed(0) : '?';
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Starts one build's gateway with stdout on a FIFO; the pipe is read until the start line, then as `mode` says. */
async function start(b, mode) {
  const fifo = openFifo();
  const [cmd, args] = pinned(SERVER_CORE, process.execPath, ['dist/runtime/node/main.js']);
  const child = spawn(cmd, args, {
    cwd: b.cwd,
    env: { PATH: process.env.PATH, ...benchGatewayEnv(simulator.url), METRICS_TOKEN },
    stdio: ['ignore', fifo.writeFd, 'inherit'],
  });
  closeSync(fifo.writeFd);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const g = { b, mode, fifo, child, exited, searches: 0, droppedReported: 0, rows: [], requests: 0 };
  g.count = (lines) => {
    for (const l of lines.map(parse)) {
      if (l.event === 'request' && l.route === SEARCH_ROUTE) g.searches++;
      if (l.event === 'log_lines_dropped') g.droppedReported += l.count;
      if (l.event === 'start') g.start = l;
    }
  };
  for (let waited = 0; !g.start && waited < 30_000; waited += 20) {
    g.count(fifo.read());
    if (!g.start) await sleep(20);
  }
  if (!g.start) throw new Error(`no start line from ${b.name}`);
  g.url = `http://127.0.0.1:${g.start.port}`;
  g.token = await benchLogin(g.url);
  g.path = `${SEARCH_ROUTE}?what=${encodeURIComponent(HIT_NUMBER)}`;
  const warm = await fetch(`${g.url}${g.path}`, { headers: { authorization: `Bearer ${g.token}` } });
  await warm.arrayBuffer();
  if (warm.status !== 200) throw new Error(`the warm-up search of ${b.name} answered ${warm.status}`);
  // The reader that reads takes what the pipe holds every 10 ms; the other one never reads during the load.
  g.reader = mode === 'reads' ? setInterval(() => g.count(fifo.read()), 10) : undefined;
  return g;
}

/** The value of `name` in the gateway's own metrics (summed over its series matching `filter`); null when absent. */
async function metric(g, name, filter = '') {
  const res = await fetch(`${g.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  const values = text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => l.includes(filter))
    .map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
  return values.length === 0 ? null : values.reduce((a, v) => a + v, 0);
}

/** Reads the pipe to the end; compares what was delivered and counted as dropped with the searches answered. */
async function finish(g) {
  if (g.reader) clearInterval(g.reader);
  const answered = await metric(g, 'callerid_gateway_http_requests_total', `route="${SEARCH_ROUTE}"`);
  for (let waited = 0; g.searches + g.droppedReported < answered && waited < 30_000; waited += 20) {
    g.count(g.fifo.read());
    await sleep(20);
  }
  const droppedMetric = await metric(g, 'callerid_gateway_log_lines_dropped_total');
  g.child.kill('SIGTERM');
  const drainer = setInterval(() => g.count(g.fifo.read()), 10);
  await g.exited;
  clearInterval(drainer);
  g.count(g.fifo.read());
  closeSync(g.fifo.readFd);
  g.accounting = [
    g.b.name,
    g.mode,
    answered,
    g.searches,
    g.droppedReported,
    g.searches + g.droppedReported,
    droppedMetric ?? 'no such metric',
  ];
}

const runs = [];
try {
  for (const mode of ['reads', 'never reads']) {
    const gateways = [];
    for (const b of builds) gateways.push(await start(b, mode));
    for (let phase = 1; phase <= PHASES; phase++) {
      const cpuBefore = gateways.map((g) => cpuUs(g.child.pid));
      const results = await Promise.all(
        gateways.map((g) =>
          wrk({
            url: g.url,
            script: 'paced.lua',
            connections: CONNECTIONS,
            seconds: SECONDS,
            env: { BENCH_PATH: g.path, BENCH_TOKEN: g.token, BENCH_DELAY_MS: String(DELAY_MS) },
          }),
        ),
      );
      for (const [i, r] of results.entries()) {
        const g = gateways[i];
        g.rows.push([
          g.b.name,
          mode,
          `${(phase - 1) * SECONDS}–${phase * SECONDS} s`,
          r.rps.toFixed(0),
          (r.p50 / 1000).toFixed(2),
          (r.p99 / 1000).toFixed(2),
          (r.max / 1000).toFixed(1),
          ((cpuUs(g.child.pid) - cpuBefore[i]) / r.requests).toFixed(0),
          r.errors + r.non2xx,
          rssMiB(g.child.pid),
        ]);
        log(`${g.b.name}, ${mode}, phase ${phase}: ${r.requests} requests, p50 ${r.p50} µs, p99 ${r.p99} µs`);
      }
    }
    for (const g of gateways) await finish(g);
    runs.push(...gateways);
  }
} finally {
  for (const g of runs) if (g.child.exitCode === null) g.child.kill('SIGKILL');
  await simulator.close();
  rmSync(dir, { recursive: true, force: true });
}
// Per reader, this build first.
const order = (g) => (g.mode === 'reads' ? 0 : 10) + builds.indexOf(g.b);
runs.sort((a, b) => order(a) - order(b));
console.log(
  table([
    ['build', 'reader', 'phase', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'CPU µs/req', 'errors', 'RSS MiB'],
    ...runs.flatMap((g) => g.rows),
  ]),
);
console.log('');
console.log(
  table([
    [
      'build',
      'reader',
      'searches answered',
      'search lines delivered',
      'lines counted as dropped',
      'delivered + dropped',
      'log_lines_dropped_total',
    ],
    ...runs.map((g) => g.accounting),
  ]),
);
