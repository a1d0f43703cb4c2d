// Which source files one request runs, read from V8's precise coverage: a miss, a hit and a login, on each door users
// run: Node's default (its own door of the search's JSON renderer) and the Worker's (the Hono app behind the Workers entry).
// Usage: node bench/files-crossed.mjs [--list] [dist-dir]   (default: this checkout's dist/, built by `npm run build`)
// Both run in this process from that dist/. The Worker's entry runs here with `cloudflare:workers` stubbed (its
// DurableObject base class and waitUntil, which the counted requests never reach) and no Durable Object bindings:
// its own adapter files are counted, the platform's are not. Each gateway is warmed up first (one-time set-up is not
// counted); the simulator's files are left out, as it is not the gateway. With REDIS_URL, Node's shares state there.
import { Session } from 'node:inspector/promises';
import { existsSync } from 'node:fs';
import { register } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchGatewayEnv, BENCH_CLIENT_SECRET, BENCH_UPSTREAM_CLIENTS } from './harness.mjs';

const distArg = process.argv.slice(2).find((a) => !a.startsWith('--'));
const distDir = resolve(distArg ?? join(import.meta.dirname, '..', 'dist'));
const file = (path) => join(distDir, path);
if (!existsSync(file('runtime/node/gateway.js')))
  throw new Error(`no built gateway under ${distDir}: run npm run build`);

// The Workers platform module, for the Worker's entry to load in Node.
const PLATFORM = `export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }
export function waitUntil(promise) { promise.catch(() => undefined); }`;
register(
  `data:text/javascript,${encodeURIComponent(`export async function resolve(specifier, context, next) {
    if (specifier === 'cloudflare:workers')
      return { shortCircuit: true, url: 'data:text/javascript,' + encodeURIComponent(${JSON.stringify(PLATFORM)}) };
    return next(specifier, context);
  }`)}`,
);

const { startNodeGateway } = await import(pathToFileURL(file('runtime/node/gateway.js')).href);
const { createWorkerGateway } = await import(pathToFileURL(file('runtime/workers/main.js')).href);
const { startSimulatorServer } = await import(pathToFileURL(file('simulator/server.js')).href);

const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const env = { ...benchGatewayEnv(simulator.url), LOG_LEVEL: 'silent' };
const form = `grant_type=client_credentials&client_id=bench&client_secret=${BENCH_CLIENT_SECRET}`;
const what = (n) => encodeURIComponent(`020 7946 ${String(n).padStart(4, '0')}`);

/** A door: how a login and a search reach it. */
function doorOf(send) {
  let token;
  const login = () =>
    send('/token/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
  return {
    async start() {
      token = (await (await login()).json()).access_token;
    },
    login: () => login().then((r) => r.text()),
    search: (n) =>
      send(`/v2/contacts/search?what=${what(n)}`, { headers: { authorization: `Bearer ${token}` } }).then((r) =>
        r.text(),
      ),
  };
}

const nodeEnv = { ...env };
if (process.env.REDIS_URL)
  Object.assign(nodeEnv, { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `files-${Date.now()}` });
const gateway = await startNodeGateway(nodeEnv);
const worker = await createWorkerGateway(
  Object.fromEntries(Object.entries(env).filter(([name]) => !['PORT', 'HOST', 'METRICS_PORT'].includes(name))),
  { host: 'gateway.example' },
);
const ctx = { waitUntil: (p) => void p.catch(() => undefined), passThroughOnException() {} };
const doors = {
  node: doorOf((path, init) => fetch(`${gateway.url}${path}`, init)),
  worker: doorOf((path, init) => worker.fetch(new Request(`https://gateway.example${path}`, init), ctx)),
};

const session = new Session();
session.connect();
await session.post('Profiler.enable');
async function filesOf(request) {
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  await session.post('Profiler.takePreciseCoverage'); // reset the counts
  await request();
  const { result } = await session.post('Profiler.takePreciseCoverage');
  await session.post('Profiler.stopPreciseCoverage');
  return result
    .filter((script) => script.url.startsWith(pathToFileURL(distDir).href))
    .filter((script) => script.functions.some((f) => f.ranges.some((r) => r.count > 0)))
    .map((script) => relative(distDir, new URL(script.url).pathname))
    .filter((path) => !path.startsWith('simulator/'))
    .sort();
}

for (const [name, door] of Object.entries(doors)) {
  await door.start();
  // Warm-up: the upstream token, every lazy set-up of the miss and hit paths.
  await door.search(1);
  await door.search(1);
  await door.search(2);
  const report = {
    miss: await filesOf(() => door.search(3)),
    hit: await filesOf(() => door.search(3)),
    login: await filesOf(() => door.login()),
  };
  for (const [request, files] of Object.entries(report)) {
    const folders = new Set(files.map((f) => f.split('/').slice(0, -1).join('/') || '.'));
    console.log(`${name} ${request}: ${files.length} files in ${folders.size} folders`);
    if (process.argv.includes('--list')) for (const f of files) console.log(`  ${f}`);
  }
}
session.disconnect();
await gateway.close({ timeoutMs: 1000 });
await simulator.close();
