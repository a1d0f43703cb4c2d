// `node bench/instructions.mjs [--before <git-ref>] [--requests N] [--warm N] [--no-build] [--idp] [--tracing-only]` (`npm run
// bench:instructions`): the instructions one cache hit costs in user space, counted by valgrind's callgrind, for bare
// node:http answering the same body, this build, this build with tracing on at ratios 1.0 and 0.1, and (with --before)
// the build of <ref> the same three ways, side by side in one run. `--idp`: this build with a gateway token, and with access tokens of a real
// identity provider (oidc-provider on loopback, ES256 and RS256), instead of the tracing run.
// Instruction counts do not drift with a shared machine's load the way CPU time does, so they show what a change to
// the hit path's own code gives where the wrk rounds of bench/hit.mjs cannot tell it from noise. They are not time:
// the kernel's share (the read and writev of each request) is not in them, nor what cache misses cost. Each server
// runs under callgrind with instrumentation off while `--warm` hits warm it up (the JIT settles), then counts
// exactly `--requests` hits sent over 50 keep-alive connections. Needs valgrind (Debian's `valgrind` package).
// Loopback only; about two minutes per server.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchIdpToken } from '../test/helpers/idp-token.mjs';
import { signingKey, startIdp } from '../test/helpers/oidc-idp.mjs';
import {
  arg,
  BENCH_UPSTREAM_CLIENTS,
  benchLogin,
  benchGatewayEnv,
  build,
  buildBaseline,
  here,
  log,
  table,
} from './harness.mjs';

if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('bench/instructions.mjs needs valgrind (apt-get install -y valgrind): not found, nothing measured');
  process.exit(process.env.CI === 'true' ? 1 : 0);
}

const beforeRef = arg('--before', undefined);
const withIdp = process.argv.includes('--idp');
/** `--tracing-only`: the traced rows alone (this build's and, with --before, the baseline's). */
const tracingOnly = process.argv.includes('--tracing-only');
const REQUESTS = Number(arg('--requests', '3000'));
const WARM = Number(arg('--warm', '10000'));
const HIT_NUMBER = '+442079460010';
const HIT_PATH = `/v2/contacts/search?what=${encodeURIComponent(HIT_NUMBER)}`;

build();
const baselineScript = beforeRef === undefined ? null : buildBaseline(beforeRef);
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const dir = mkdtempSync(join(tmpdir(), 'callerid-instructions-'));
const bodyFile = join(dir, 'body.json');
// valgrind names its control pipes after these; callgrind_control must see the same ones.
const names = { USER: process.env.USER || 'bench', LOGNAME: process.env.LOGNAME || 'bench', HOST: '127.0.0.1' };
const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });

function get(url, token) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${HIT_PATH}`, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${res.statusCode}: ${body}`))));
    });
    // A kept-alive connection the server closed as this request went out on it (a server slowed down by callgrind
    // lets some idle past its keep-alive timeout): asked again on another, as a browser would.
    req.on('error', (error) =>
      (error.code === 'ECONNRESET' && req.reusedSocket ? get(url, token) : Promise.reject(error)).then(resolve, reject),
    );
  });
}

/** `count` hits over 50 connections. */
async function hits(url, token, count) {
  let sent = 0;
  const connection = async () => {
    while (sent++ < count) await get(url, token);
  };
  await Promise.all(Array.from({ length: 50 }, connection));
}

/** Starts `script` (relative to bench/) under callgrind, counting nothing yet. */
function start(script, env) {
  const out = join(dir, `callgrind.${script.replaceAll(/[^\w]/g, '_')}.%p`);
  const child = spawn(
    'valgrind',
    [
      '-q',
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${out}`,
      process.execPath,
      join(here, script),
    ],
    { env: { ...process.env, ...env, ...names }, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
    child.once('message', (msg) => resolve({ child, url: msg.url, out }));
  });
}

/**
 * Instructions per hit of one server: `--requests` hits counted after `--warm` hits not counted. `login`: false (no
 * token), true (a gateway token), or a function giving the token to search with.
 */
async function measure(name, script, env, login) {
  log(`${name}: ${WARM} hits to warm up, then ${REQUESTS} counted (under callgrind, slow)`);
  const server = await start(script, env);
  try {
    const token = login ? await loginAt(server.url, login === true ? benchLogin : login) : '';
    await hits(server.url, token, WARM);
    const control = (...args) =>
      execFileSync('callgrind_control', [...args, String(server.child.pid)], {
        env: { ...process.env, ...names },
        stdio: 'ignore',
      });
    control('--instr=on');
    await hits(server.url, token, REQUESTS);
    control('--dump');
    const prefix = `${server.out.split('/').pop().replace('%p', String(server.child.pid))}.`;
    const dumps = readdirSync(dir).filter((f) => f.startsWith(prefix));
    if (dumps.length === 0) throw new Error(`callgrind wrote no dump for ${name}`);
    const total = dumps.reduce((sum, f) => {
      const m = readFileSync(join(dir, f), 'utf8').match(/^(?:summary|totals): (\d+)/m);
      return sum + (m ? Number(m[1]) : 0);
    }, 0);
    log(`${name}: ${Math.round(total / REQUESTS).toLocaleString('en')} instructions per hit`);
    return total / REQUESTS;
  } finally {
    server.child.kill('SIGKILL');
  }
}

async function loginAt(url, obtain) {
  const token = await obtain(url);
  // The first search fills the cache; its body is what bare node answers.
  writeFileSync(bodyFile, await get(url, token));
  return token;
}

const gatewayEnv = { ...benchGatewayEnv(simulator.url), REDIS_URL: '', UPSTREAM_TIMEOUT_MS: '60000' };
const results = {};
if (withIdp) await measureIdp();
else {
  if (!tracingOnly) results['this build'] = await measure('this build', 'servers/gateway.mjs', gatewayEnv, true);
  await measureTracing('this build', 'servers/gateway.mjs');
  if (baselineScript !== null) await measureTracing(`before (${beforeRef})`, baselineScript);
}

/**
 * Tracing on, every trace recorded and a tenth of them: each recorded hit's server span encoded and exported to a
 * collector of the bench's own.
 */
async function measureTracing(build, script) {
  const collector = http.createServer((req, res) => req.resume().on('end', () => res.end()));
  await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
  for (const ratio of ['1.0', '0.1']) {
    const name = `${build}, tracing on (ratio ${ratio})`;
    results[name] = await measure(
      name,
      script,
      {
        ...gatewayEnv,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${collector.address().port}/v1/traces`,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: ratio,
      },
      true,
    );
  }
  collector.close();
}

/**
 * The bench client with its secret and an identity at an identity provider (the clients file): one gateway per
 * signing algorithm of the provider, hits with the provider's token, and the first with the gateway's own token.
 */
async function measureIdp() {
  const audience = 'https://callerid.example.com';
  const app = { id: 'bench-app', secret: 'bench-app-secret-0123456789' };
  const { GATEWAY_CLIENTS: _, GATEWAY_ADMIN_CLIENTS: __, ...env } = gatewayEnv;
  const hash = gatewayEnv.GATEWAY_CLIENTS.split(':')[1];
  for (const alg of ['ES256', 'RS256']) {
    const idp = await startIdp({ audience, apps: [app], keys: [await signingKey('k1', alg)] });
    const file = join(dir, `clients-${alg}.json`);
    const identities = [{ issuer: idp.issuer, subject: app.id }];
    const clients = [{ id: 'bench', secrets: [{ hash: `sha256:${hash}` }], admin: true, identities }];
    writeFileSync(file, JSON.stringify({ issuers: [{ issuer: idp.issuer, audience }], clients }));
    const fileEnv = { ...env, GATEWAY_CLIENTS_FILE: file };
    if (alg === 'ES256')
      results['this build, gateway token'] = await measure('gateway token', 'servers/gateway.mjs', fileEnv, true);
    const name = `this build, identity provider's token (${alg})`;
    results[name] = await measure(name, 'servers/gateway.mjs', fileEnv, () => fetchIdpToken(idp.issuer, audience, app));
    await idp.stop();
  }
}
if (baselineScript !== null && !tracingOnly)
  results[`before (${beforeRef})`] = await measure(`before (${beforeRef})`, baselineScript, gatewayEnv, true);
if (!tracingOnly)
  results['bare node:http'] = await measure(
    'bare node:http',
    'servers/bare-node.mjs',
    { BENCH_BODY_FILE: bodyFile, BENCH_NUMBER: HIT_NUMBER },
    false,
  );

const bare = results['bare node:http'];
const before = baselineScript === null ? undefined : results[`before (${beforeRef})`];
const rows = [
  [
    'hit, user-space instructions',
    'per hit',
    'bare node / this',
    'vs before',
    'vs this build',
    'vs its build untraced',
  ],
];
/** A traced row's own build without tracing. */
const untracedOf = (name) => results[name.replace(/, tracing on \(ratio [\d.]+\)$/, '')];
/** `value / reference` as a ratio, or nothing where the reference was not measured (`--tracing-only`). */
const ratioTo = (value, reference) => (reference === undefined ? '' : `${(value / reference).toFixed(3)}x`);
const thisBuild = results['this build'] ?? results['this build, gateway token'];
for (const [name, perHit] of Object.entries(results))
  rows.push([
    name,
    Math.round(perHit).toLocaleString('en'),
    bare === undefined ? '' : (bare / perHit).toFixed(2),
    name === 'bare node:http' ? '' : ratioTo(perHit, before),
    name === 'bare node:http' ? '' : ratioTo(perHit, thisBuild),
    name.includes('tracing on') ? ratioTo(perHit, untracedOf(name)) : '',
  ]);
console.log(
  `\ninstructions per cache hit (callgrind; ${REQUESTS} hits after ${WARM}, 50 connections; ${new Date().toISOString()}, node ${process.version})`,
);
console.log(table(rows));
process.exit(0);
