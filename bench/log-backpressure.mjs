// `node bench/log-backpressure.mjs [--seconds S] [--phases N] [--connections C] [--delay-ms D] [--no-build]`: the answer
// latency of the built gateway (`node dist/runtime/node/main.js`, as the container runs it) while its stdout is a pipe
// whose reader reads, and while it is a pipe whose reader never reads (a stuck log collector). Paced concurrent load:
// C connections each asking for one cached number every D ms (default 10 × 20 ms ≈ 500 req/s), in N phases of S
// seconds so the table shows the latency as the unread backlog grows towards its 8 MiB bound. After the stuck run the
// pipe is read to the end, and the lines delivered plus the lines the `log_lines_dropped` warning counts are compared
// with the requests answered.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
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

const SECONDS = Number(arg('--seconds', '15'));
const PHASES = Number(arg('--phases', '4'));
const CONNECTIONS = Number(arg('--connections', '10'));
const DELAY_MS = Number(arg('--delay-ms', '20'));
const HIT_NUMBER = '+442079460010';
const { canPin, pinned, wrk } = createHarness();

build();
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const dir = mkdtempSync(join(tmpdir(), 'callerid-log-bench-'));
const chunk = Buffer.alloc(1 << 20);

/** A FIFO whose read end this process holds (non-blocking); reads what it holds now, as lines. */
function openFifo(name) {
  const path = join(dir, name);
  if (spawnSync('mkfifo', [path]).status !== 0) throw new Error('mkfifo failed');
  const readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writeFd = openSync(path, constants.O_WRONLY);
  let partial = '';
  return {
    readFd,
    writeFd,
    /** Every whole line the pipe holds now. */
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
        const text = partial + chunk.toString('utf8', 0, n);
        const parts = text.split('\n');
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

async function run(mode) {
  const fifo = openFifo(`stdout-${mode}`);
  const [cmd, args] = pinned(SERVER_CORE, process.execPath, ['dist/runtime/node/main.js']);
  const child = spawn(cmd, args, {
    cwd: root,
    env: { PATH: process.env.PATH, ...benchGatewayEnv(simulator.url) },
    stdio: ['ignore', fifo.writeFd, 'inherit'],
  });
  closeSync(fifo.writeFd);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  // The start line names the port; until it comes the pipe is read in both modes.
  const seen = [];
  let start;
  for (let waited = 0; !start && waited < 20_000; waited += 20) {
    seen.push(...fifo.read().map(parse));
    start = seen.find((l) => l.event === 'start');
    if (!start) await sleep(20);
  }
  if (!start) throw new Error(`no start line from the gateway (${mode})`);
  const url = `http://127.0.0.1:${start.port}`;
  const token = await benchLogin(url);
  const path = `/v2/contacts/search?what=${encodeURIComponent(HIT_NUMBER)}`;
  const warm = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  await warm.arrayBuffer();
  if (warm.status !== 200) throw new Error(`the warm-up search answered ${warm.status}`);
  let delivered = seen.filter((l) => l.event === 'request').length;
  let droppedReported = 0;
  const count = (lines) => {
    for (const l of lines.map(parse)) {
      if (l.event === 'request') delivered++;
      if (l.event === 'log_lines_dropped') droppedReported += l.count;
    }
  };
  // The reader that reads takes what the pipe holds every 10 ms; the other one never reads during the load.
  const reader = mode === 'reads' ? setInterval(() => count(fifo.read()), 10) : undefined;
  const rows = [];
  let requests = 0;
  for (let phase = 1; phase <= PHASES; phase++) {
    const r = await wrk({
      url,
      script: 'paced.lua',
      connections: CONNECTIONS,
      seconds: SECONDS,
      env: { BENCH_PATH: path, BENCH_TOKEN: token, BENCH_DELAY_MS: String(DELAY_MS) },
    });
    requests += r.requests;
    rows.push([
      mode,
      `${(phase - 1) * SECONDS}–${phase * SECONDS} s`,
      r.rps.toFixed(0),
      (r.p50 / 1000).toFixed(2),
      (r.p99 / 1000).toFixed(2),
      (r.max / 1000).toFixed(1),
      r.errors + r.non2xx,
      rssMiB(child.pid),
    ]);
    log(`${mode} phase ${phase}: ${r.requests} requests, p50 ${r.p50} µs, p99 ${r.p99} µs, max ${r.max} µs`);
  }
  if (reader) clearInterval(reader);
  // Now every reader reads: what was kept arrives, then the warning with the count of what was dropped.
  const expected = requests + 1; // and the warm-up search; the login and probes are not logged at info
  for (let waited = 0; delivered + droppedReported < expected && waited < 30_000; waited += 20) {
    count(fifo.read());
    await sleep(20);
  }
  child.kill('SIGTERM');
  const stopStarted = Date.now();
  const drainer = setInterval(() => count(fifo.read()), 10);
  const code = await exited;
  clearInterval(drainer);
  count(fifo.read());
  closeSync(fifo.readFd);
  log(
    `${mode}: ${expected} requests logged at info; delivered ${delivered}, counted as dropped ${droppedReported}; ` +
      `SIGTERM exit ${code} after ${Date.now() - stopStarted} ms`,
  );
  return { rows, expected, delivered, droppedReported };
}

const results = [];
try {
  for (const mode of ['reads', 'never reads']) results.push(await run(mode));
} finally {
  await simulator.close();
  rmSync(dir, { recursive: true, force: true });
}
const header = ['reader', 'phase', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'errors', 'RSS MiB'];
console.log(table([header, ...results.flatMap((r) => r.rows)]));
for (const [i, mode] of ['reads', 'never reads'].entries()) {
  const r = results[i];
  console.log(
    `${mode}: requests ${r.expected}, lines delivered ${r.delivered} + counted as dropped ${r.droppedReported} = ${r.delivered + r.droppedReported}`,
  );
}
