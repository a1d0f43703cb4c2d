// `node bench/before-after.mjs [--before <baseline or git-ref>] [--this <baseline or git-ref>] [--launches L] [--rounds N]`
// [--seconds S] [--no-build]
// (`npm run bench:before-after`): the CPU a cache hit (50 connections) and a miss (1 connection, distinct numbers) cost
// in this build against a named baseline (bench/baselines.mjs; default the one DEFAULT_BASELINE names), paired round
// by round. Each launch starts three gateways: this build, a second process of this build (the control), and the
// baseline; they take each round's load at the same moment, each under its own wrk. Each round gives the ratio of this
// build's CPU per request (the mean of its two processes) to the baseline's, and of the control's to the first
// process of this build; the table has the median of each over every round of every launch and, in brackets, the
// middle half of the rounds. The control is what the instrument reads for two identical servers: a process's own
// luck (where its heap and code land, its hash seeds) moves its cost by a few percent for as long as it runs, which
// is why the gateways are started anew for each launch. Pairing within a round cancels the machine's drift between
// rounds (a shared 2-CPU machine's speed moves by a third over a minute); the wrk that starts first changes every
// round, since a server loaded a moment longer alone answers with fewer requests per wake-up. `--this` measures another
// build in place of this checkout's (what one change between two named builds cost), built as a baseline is.
import { spawnSync } from 'node:child_process';
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
  syntheticDirectory,
  table,
} from './harness.mjs';
import { DEFAULT_BASELINE } from './baselines.mjs';

const beforeName = arg('--before', DEFAULT_BASELINE);
const thisName = arg('--this', undefined);
const LAUNCHES = Number(arg('--launches', '12'));
const ROUNDS = Number(arg('--rounds', '3'));
const SECONDS = Number(arg('--seconds', '3'));
const HIT_PATH = `/v2/contacts/search?what=${encodeURIComponent('+442079460010')}`;
/** Fresh numbers per miss run: a c=1 run stays well under 4,000 requests a second. */
const MISS_STEP = 4000 * SECONDS;
const { canPin, cpuUs, startChild, wrk } = createHarness();

build();
const baselineScript = buildBaseline(beforeName);
const selfScript = thisName === undefined ? 'servers/gateway.mjs' : buildBaseline(thisName);
if (baselineScript === null || selfScript === null) process.exit(process.env.CI === 'true' ? 1 : 0);
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const { DIRECTORY_ENTRIES, PROVIDERS } = await import('../dist/simulator/directory.js');
const simulator = await startSimulatorServer({
  clients: BENCH_UPSTREAM_CLIENTS,
  directory: [...DIRECTORY_ENTRIES, ...syntheticDirectory(MISS_STEP * 3 * (ROUNDS + 1) * LAUNCHES, PROVIDERS.swissdir)],
});

const env = { ...benchGatewayEnv(simulator.url), REDIS_URL: '' };
const SELF = thisName === undefined ? 'this build' : thisName;
const CONTROL = `${SELF}, control`;
const BEFORE = `before (${beforeName})`;
const names = [SELF, CONTROL, BEFORE];
/** The running gateways of the current launch, by name. */
let gateways = {};

async function startGateways() {
  gateways = {
    [SELF]: await startChild(selfScript, env),
    [CONTROL]: await startChild(selfScript, env),
    [BEFORE]: await startChild(baselineScript, env),
  };
  for (const g of Object.values(gateways)) g.token = await login(g.url);
}

async function login(url) {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: 'bench',
    client_secret: BENCH_CLIENT_SECRET,
  });
  return (await (await fetch(`${url}/token/login`, { method: 'POST', body })).json()).access_token;
}

/** The load of one path: `(name, seconds)` runs one wrk of `script` against the gateway `name`. */
const loadOf = (script, connections, envOf) => (name, seconds) =>
  wrk({ url: gateways[name].url, script, connections, seconds, env: envOf(gateways[name].token) });

const hitLoad = () => loadOf('fixed.lua', 50, (token) => ({ BENCH_PATH: HIT_PATH, BENCH_TOKEN: token }));

function missLoad() {
  let next = 0;
  return loadOf('distinct.lua', 1, (token) => ({
    BENCH_START: String((next += MISS_STEP) - MISS_STEP),
    BENCH_LIMIT: '0',
    BENCH_TOKEN: token,
    BENCH_BASE_PATH: '/v2/contacts/search',
  }));
}

/** One round: every gateway loaded at once, the wrks started in `order`; CPU µs per request by name. */
async function round(load, order) {
  const before = order.map((n) => cpuUs(gateways[n].child.pid));
  const results = await Promise.all(order.map((n) => load(n, SECONDS)));
  return Object.fromEntries(
    order.map((n, i) => {
      const r = results[i];
      if (r.errors + r.non2xx > 0) throw new Error(`${n}: ${r.errors} errors, ${r.non2xx} non-2xx answers`);
      return [n, (cpuUs(gateways[n].child.pid) - before[i]) / r.requests];
    }),
  );
}

/** `ROUNDS` paired rounds of one path, after one round to warm up. */
async function measure(path, load) {
  await round(load, names);
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    log(`${path} round ${i + 1}/${ROUNDS}`);
    const order = names.map((_, k) => names[(k + i) % names.length]);
    rounds.push(await round(load, order));
  }
  return rounds;
}

/** The median and the middle half's range of per-round values. */
function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { median: median(values), low: at(0.25), high: at(0.75) };
}

const fmt = ({ median: m, low, high }) => `${m.toFixed(3)}x (${low.toFixed(3)}–${high.toFixed(3)})`;

function rowsOf(path, rounds) {
  const cpu = (n) => median(rounds.map((r) => r[n])).toFixed(1);
  const self = (r) => (r[SELF] + r[CONTROL]) / 2;
  return [
    path,
    cpu(SELF),
    cpu(CONTROL),
    cpu(BEFORE),
    fmt(spread(rounds.map((r) => self(r) / r[BEFORE]))),
    fmt(spread(rounds.map((r) => r[CONTROL] / r[SELF]))),
  ];
}

const hit = [];
const miss = [];
const missing = missLoad();
for (let i = 0; i < LAUNCHES; i++) {
  log(`launch ${i + 1}/${LAUNCHES}: three gateways started anew`);
  await startGateways();
  hit.push(...(await measure('hit c=50', hitLoad())));
  miss.push(...(await measure('miss c=1', missing)));
  for (const g of Object.values(gateways)) g.child.kill('SIGKILL');
}
const head = [
  'path',
  `${SELF} µs/req`,
  'control µs/req',
  `${BEFORE} µs/req`,
  `${SELF} / before (middle half)`,
  'control / first (middle half)',
];
process.stdout.write(
  `\nCPU per request, ${SELF} against ${BEFORE}, ${LAUNCHES} launches of ${ROUNDS} paired rounds of ${SECONDS} s, three gateways loaded at once ` +
    `(${new Date().toISOString()}, node ${process.version}; ${canPin ? 'servers on core 0, wrk on core 1' : 'not pinned'})\n` +
    `${table([head, rowsOf('hit c=50', hit), rowsOf('miss c=1', miss)])}\n`,
);
await simulator.close();
process.exit(0);
