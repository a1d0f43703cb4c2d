// Which source files one request runs, read from V8's precise coverage: a miss (with Redis), a hit, a login.
// Usage: node bench/files-crossed.mjs [dist-dir]   (default: this checkout's dist/, built by `npm run build`)
// It starts the gateway of that dist/ in this process (hit path off, so the app's path is the one counted, as a
// Worker runs it), warms it up (so one-time set-up is not counted), then counts the files under dist/ whose
// functions ran during exactly one request; the simulator's own files are left out, as it is not the gateway.
import { Session } from 'node:inspector/promises';
import { existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchGatewayEnv, BENCH_CLIENT_SECRET, BENCH_UPSTREAM_CLIENTS } from './harness.mjs';

const distArg = process.argv.slice(2).find((a) => !a.startsWith('--'));
const distDir = resolve(distArg ?? join(import.meta.dirname, '..', 'dist'));
const pick = (...candidates) => candidates.map((c) => join(distDir, c)).find(existsSync);
const gatewayFile = pick('runtime/node/gateway.js', 'runtime/node-gateway.js');
const simulatorFile = pick('simulator/server.js', 'runtime/simulator-server.js');
if (!gatewayFile || !simulatorFile) throw new Error(`no built gateway under ${distDir}: run npm run build`);
const { startNodeGateway } = await import(pathToFileURL(gatewayFile).href);
const { startSimulatorServer } = await import(pathToFileURL(simulatorFile).href);

const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const env = { ...benchGatewayEnv(simulator.url), LOG_LEVEL: 'silent' };
if (process.env.REDIS_URL)
  Object.assign(env, { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `files-${Date.now()}` });
const gateway = await startNodeGateway(env, { hitPath: false });
const login = () =>
  fetch(`${gateway.url}/token/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=bench&client_secret=${BENCH_CLIENT_SECRET}`,
  });
const token = (await (await login()).json()).access_token;
const search = (n) =>
  fetch(`${gateway.url}/v2/contacts/search?what=${encodeURIComponent(`020 7946 ${String(n).padStart(4, '0')}`)}`, {
    headers: { authorization: `Bearer ${token}` },
  }).then((r) => r.text());
// Warm-up: the upstream token, every lazy set-up of the miss and hit paths.
await search(1);
await search(1);
await search(2);

const session = new Session();
session.connect();
await session.post('Profiler.enable');
async function filesOf(request) {
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // reset the counts
  await request();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  const simulatorDir = simulatorFile.includes('/simulator/') ? join(distDir, 'simulator') : simulatorFile;
  return result
    .filter((script) => script.url.startsWith(pathToFileURL(distDir).href))
    .filter((script) => script.functions.some((f) => f.ranges.some((r) => r.count > 0)))
    .map((script) => relative(distDir, new URL(script.url).pathname))
    .filter((file) => !join(distDir, file).startsWith(simulatorDir) && !file.startsWith('simulator/'))
    .sort();
}

const report = {
  miss: await filesOf(() => search(3)),
  hit: await filesOf(() => search(3)),
  login: await filesOf(() => login()),
};
for (const [name, files] of Object.entries(report)) {
  const folders = new Set(files.map((f) => f.split('/').slice(0, -1).join('/') || '.'));
  console.log(`${name}: ${files.length} files in ${folders.size} folders`);
  if (process.argv.includes('--list')) for (const f of files) console.log(`  ${f}`);
}
session.disconnect();
await gateway.close({ timeoutMs: 1000 });
await simulator.close();
