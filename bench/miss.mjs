// `node bench/miss.mjs [--before <git-ref>] [--rounds N] [--seconds S] [--together] [--no-build]` (also `npm run bench -- --miss-before
// <ref>`): the miss path at 1 connection, side by side in one run: distinct listed numbers straight to the simulator,
// through this build's gateway, and (with --before) through the gateway built from <ref> (git archive into a temporary
// directory, built with this checkout's tsc and node_modules), beside the floor for a miss on Node: a bare node:http
// server forwarding each search to the simulator (servers/bare-proxy.mjs), once over undici and once over a node:http
// keep-alive Agent. Rounds alternate the order so drift on a shared machine hits all alike; the table has medians: p50,
// p99, the p50 each adds over the direct call, and its CPU per miss. With --together every round loads all the gateways
// at once (each its own wrk), for CPU ratios that hold where one-after-another rounds drift; their latencies then
// include the wait for the shared cores.
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
  SERVER_CORE,
  syntheticDirectory,
  table,
  TARGETS,
} from './harness.mjs';

const beforeRef = arg('--before', undefined);
const ROUNDS = Number(arg('--rounds', '3'));
const SECONDS = Number(arg('--seconds', '3'));
const TOGETHER = process.argv.includes('--together');
const { canPin, startChild, withCpu, wrk } = createHarness();

build();
const baselineScript = beforeRef === undefined ? undefined : (buildBaseline(beforeRef) ?? undefined);

if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const { DIRECTORY_ENTRIES, PROVIDERS } = await import('../dist/simulator/directory.js');

// Each run takes fresh numbers from its own block: a c=1 run stays well under 4,000 requests a second.
const STEP = 4000 * SECONDS;
const RUNS = 3 + ROUNDS * 3;
const simulator = await startSimulatorServer({
  clients: BENCH_UPSTREAM_CLIENTS,
  directory: [...DIRECTORY_ENTRIES, ...syntheticDirectory(STEP * RUNS, PROVIDERS.swissdir)],
});
const loginAt = async (url, body, headers = {}) =>
  (await (await fetch(`${url}/token/login`, { method: 'POST', headers, body })).json()).access_token;
const gateways = { after: await startChild('servers/gateway.mjs', benchGatewayEnv(simulator.url)) };
if (baselineScript !== undefined) gateways.before = await startChild(baselineScript, benchGatewayEnv(simulator.url));
// The limit for a miss on Node here: a bare node:http server forwarding to the upstream, with either client.
for (const client of ['undici', 'http'])
  gateways[`proxy-${client}`] = await startChild('servers/bare-proxy.mjs', {
    ...benchGatewayEnv(simulator.url),
    BENCH_PROXY_CLIENT: client,
  });
const tokens = {};
for (const [name, g] of Object.entries(gateways)) {
  if (name.startsWith('proxy-')) {
    tokens[name] = '';
    continue;
  }
  tokens[name] = await loginAt(
    g.url,
    new URLSearchParams({ grant_type: 'client_credentials', client_id: 'bench', client_secret: BENCH_CLIENT_SECRET }),
  );
}
const simToken = await loginAt(
  simulator.url,
  new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: 'bench-gateway',
    client_secret: BENCH_UPSTREAM_CLIENTS['bench-gateway'],
  }),
  { 'content-type': 'application/x-www-form-urlencoded' },
);

// As in run.mjs: the simulator (this process) sits on the server core for the c=1 latency.
if (canPin) spawnSync('taskset', ['-cp', SERVER_CORE, String(process.pid)], { stdio: 'ignore' });
let next = 0;
const env = (token) => ({
  BENCH_START: String((next += STEP) - STEP),
  BENCH_LIMIT: '0',
  BENCH_TOKEN: token,
  BENCH_BASE_PATH: '/v2/contacts/search',
});
const runs = { direct: [], ...Object.fromEntries(Object.keys(gateways).map((name) => [name, []])) };
for (const [name, g] of Object.entries(gateways))
  await wrk({ url: g.url, script: 'distinct.lua', connections: 1, seconds: 1, env: env(tokens[name]) });
for (let round = 0; round < ROUNDS; round++) {
  log(`miss c=1 round ${round + 1}/${ROUNDS}: simulator directly, ${Object.keys(gateways).join(', ')}`);
  runs.direct.push(
    await withCpu(process.pid, () =>
      wrk({ url: simulator.url, script: 'distinct.lua', connections: 1, seconds: SECONDS, env: env(simToken) }),
    ),
  );
  const order = round % 2 === 0 ? Object.keys(gateways) : Object.keys(gateways).reverse();
  const load = (name) =>
    withCpu(gateways[name].child.pid, () =>
      wrk({
        url: gateways[name].url,
        script: 'distinct.lua',
        connections: 1,
        seconds: SECONDS,
        env: env(tokens[name]),
      }),
    );
  if (TOGETHER) {
    const results = await Promise.all(order.map(load));
    order.forEach((name, i) => runs[name].push(results[i]));
  } else for (const name of order) runs[name].push(await load(name));
}

const ms = (us) => (us / 1000).toFixed(3);
const direct50 = median(runs.direct.map((r) => r.p50));
const rows = [['miss c=1', 'p50 ms', 'p99 ms', 'added p50 ms', 'CPU µs/miss', 'errors']];
rows.push([
  'simulator directly',
  ms(direct50),
  ms(median(runs.direct.map((r) => r.p99))),
  '',
  `${median(runs.direct.map((r) => r.cpuPerReq)).toFixed(0)} (simulator)`,
  '',
]);
for (const [name, label] of [
  ['after', 'gateway (this build)'],
  ['before', `gateway (${beforeRef})`],
  ['proxy-undici', 'bare node:http proxy, undici'],
  ['proxy-http', 'bare node:http proxy, node:http Agent'],
]) {
  if (runs[name] === undefined) continue;
  const r = runs[name];
  const p50 = median(r.map((x) => x.p50));
  const cpu = median(r.map((x) => x.cpuPerReq));
  const met = (ok) => (ok ? ' (met)' : ' (not met)');
  rows.push([
    label,
    ms(p50),
    ms(median(r.map((x) => x.p99))),
    `${ms(p50 - direct50)}${met((p50 - direct50) / 1000 <= TARGETS.missAddedP50Ms)}`,
    `${cpu.toFixed(0)}${met(cpu <= TARGETS.missCpuUs)}`,
    String(r.reduce((n, x) => n + x.errors + x.non2xx, 0)),
  ]);
}
process.stdout.write(
  `\nmiss path at 1 connection, medians of ${ROUNDS} rounds of ${SECONDS} s${TOGETHER ? ', all gateways loaded at once' : ''} (${new Date().toISOString()}, node ${process.version}; targets: added p50 <= ${TARGETS.missAddedP50Ms} ms, CPU/miss <= ${TARGETS.missCpuUs} µs)\n` +
    `${table(rows)}\n`,
);
for (const g of Object.values(gateways)) g.child.send({ type: 'stop' });
await simulator.close();
setTimeout(() => process.exit(0), 500).unref();
