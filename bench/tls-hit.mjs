// `node bench/tls-hit.mjs [--rounds N] [--seconds S] [--paced MS] [--no-build]` (`npm run bench:tls`): a hit over kept-alive
// connections, plain HTTP beside TLS, in one run with every row loaded at once in each round (as hit.mjs --together),
// so their ratios hold while the machine's speed drifts. Each row has a gateway of its own (its CPU is its row's):
// wrk with a bearer token over plain HTTP, over the gateway's HTTPS, and through a real nginx terminating TLS in front of
// a plain-HTTP gateway; then, because wrk cannot present a client certificate, a keep-alive Node client (undici) over
// HTTPS with a bearer token, with the client certificate as the only credential, and with that certificate through nginx
// (forwarded as a URL-encoded PEM in X-SSL-Client-Cert, verified by the gateway). The figure: server CPU µs per
// request, the gateway's and nginx's, medians of the rounds. Compare wrk rows with wrk rows and Node-client rows with
// Node-client rows: the Node client drives fewer requests a second, and a server's CPU per request depends on its load.
// `--paced MS` takes that out: each connection pauses MS after every answer, so every row asks at about the same rate.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import {
  arg,
  BENCH_CLIENT_SECRET,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  benchLogin,
  build,
  createHarness,
  LOAD_CORE,
  log,
  median,
  SERVER_CORE,
  table,
} from './harness.mjs';

const ROUNDS = Number(arg('--rounds', '5'));
const SECONDS = Number(arg('--seconds', '5'));
const CONNECTIONS = 50;
/** With `--paced MS`, each connection waits MS after an answer: every row asks at about the same rate. */
const PACE_MS = arg('--paced', undefined) === undefined ? undefined : Number(arg('--paced'));
const HIT_PATH = `/v2/contacts/search?what=${encodeURIComponent('+442079460010')}`;
const { canPin, children, cpuUs, pinned, startChild, wrk } = createHarness();
const dir = mkdtempSync(join(tmpdir(), 'callerid-bench-tls-'));
const file = (name) => join(dir, name);

/** A CA, the server's certificate for 127.0.0.1 and the bench client's, made by openssl (P-256, as the tests' PKI). */
function makePki() {
  const openssl = (args) => execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'];
  openssl(['req', '-x509', ...key, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-subj', '/CN=bench CA']);
  for (const [name, subj, san] of [
    ['server', '/CN=localhost', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
    ['client', '/O=Example/CN=bench', 'basicConstraints=CA:FALSE'],
  ])
    openssl(
      ['req', '-x509', ...key, '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-subj', subj, '-addext', san].concat([
        '-keyout',
        file(`${name}.key`),
        '-out',
        file(`${name}.pem`),
      ]),
    );
  const der = Buffer.from(readFileSync(file('client.pem'), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64');
  return { clientSha256: createHash('sha256').update(der).digest('hex') };
}

/** A real nginx on a free port, one process (master_process off), terminating TLS in front of `upstream`. */
async function startNginx(name, upstream) {
  const port = await freeLoopbackPort();
  const conf = file(`${name}.conf`);
  writeFileSync(
    conf,
    `daemon off;
master_process off;
pid ${file(`${name}.pid`)};
error_log ${file(`${name}-error.log`)};
events {}
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream gateway { server ${new URL(upstream).host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port} ssl;
    keepalive_requests 1000000;
    ssl_certificate ${file('server.pem')};
    ssl_certificate_key ${file('server.key')};
    ssl_client_certificate ${file('ca.pem')};
    ssl_verify_client optional;
    location / {
      proxy_pass http://gateway;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-SSL-Client-Cert $ssl_client_escaped_cert;
    }
  }
}
`,
  );
  const [cmd, args] = pinned(SERVER_CORE, 'nginx', ['-c', conf, '-p', dir, '-e', file(`${name}-error.log`)]);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  children.push(child);
  for (let i = 0; i < 100 && !(await accepts(port)); i++) await new Promise((r) => setTimeout(r, 50));
  return { child, url: `https://127.0.0.1:${port}` };
}

function freeLoopbackPort() {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** `connections` loops, each asking the hit over and over on its own kept-alive connection for `seconds`. */
async function nodeLoad({ url, dispatcher, headers }, seconds) {
  const started = performance.now();
  const until = started + seconds * 1000;
  const counts = { requests: 0, non2xx: 0, errors: 0 };
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        try {
          const res = await request(`${url}${HIT_PATH}`, { dispatcher, headers });
          await res.body.dump();
          counts.requests++;
          if (res.statusCode !== 200) counts.non2xx++;
          if (PACE_MS !== undefined) await new Promise((r) => setTimeout(r, PACE_MS));
        } catch {
          counts.errors++;
        }
      }
    }),
  );
  return { ...counts, rps: counts.requests / ((performance.now() - started) / 1000) };
}

build();
if (canPin) spawnSync('taskset', ['-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
const { clientSha256 } = makePki();
const hash = createHash('sha256').update(BENCH_CLIENT_SECRET).digest('hex');
writeFileSync(
  file('clients.json'),
  JSON.stringify({
    clients: [
      { id: 'bench', admin: true, secrets: [{ hash: `sha256:${hash}` }], certificates: [{ sha256: clientSha256 }] },
    ],
  }),
);
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const env = { ...benchGatewayEnv(simulator.url), GATEWAY_CLIENTS: '', GATEWAY_ADMIN_CLIENTS: '' };
Object.assign(env, { GATEWAY_CLIENTS_FILE: file('clients.json'), REDIS_URL: '' });
const https = {
  TLS_CERT_FILE: file('server.pem'),
  TLS_KEY_FILE: file('server.key'),
  TLS_CLIENT_CA_FILE: file('ca.pem'),
};
const behindNginx = {
  TRUST_PROXY_HOPS: '1',
  TLS_CLIENT_CERT_HEADER: 'X-SSL-Client-Cert',
  TLS_CLIENT_CA_FILE: file('ca.pem'),
};
const ca = readFileSync(file('ca.pem'));
const agent = (withCert) =>
  new Agent({
    connections: CONNECTIONS,
    keepAliveTimeout: 60_000,
    connect: withCert ? { ca, cert: readFileSync(file('client.pem')), key: readFileSync(file('client.key')) } : { ca },
  });

const plain = await startChild('servers/gateway.mjs', env);
const token = await benchLogin(plain.url);
const bearer = { authorization: `Bearer ${token}` };
/** Each row: its load (wrk or the Node client), its URL, the gateway it measures and the nginx in front, if any. */
const rows = [];
const row = (name, load, gateway, extra = {}) => rows.push({ name, load, gateway, url: gateway.url, ...extra });
row('plain HTTP, bearer token', 'wrk', plain);
row('HTTPS, bearer token', 'wrk', await startChild('servers/gateway.mjs', { ...env, ...https }));
{
  const gateway = await startChild('servers/gateway.mjs', { ...env, ...behindNginx });
  const nginx = await startNginx('nginx-wrk', gateway.url);
  row('nginx terminating TLS → plain HTTP, bearer token', 'wrk', gateway, { nginx, url: nginx.url });
}
row('HTTPS, bearer token', 'node', await startChild('servers/gateway.mjs', { ...env, ...https }), { headers: bearer });
row('HTTPS, client certificate (no token)', 'node', await startChild('servers/gateway.mjs', { ...env, ...https }), {
  cert: true,
});
{
  const gateway = await startChild('servers/gateway.mjs', { ...env, ...behindNginx });
  const nginx = await startNginx('nginx-node', gateway.url);
  row('nginx terminating TLS, client certificate forwarded', 'node', gateway, { nginx, url: nginx.url, cert: true });
}
for (const r of rows) {
  r.dispatcher = agent(r.cert === true);
  r.headers ??= r.cert ? {} : bearer;
  const first = await request(`${r.url}${HIT_PATH}`, { dispatcher: r.dispatcher, headers: r.headers });
  const body = await first.body.text();
  if (first.statusCode !== 200) throw new Error(`${r.load}: ${r.name} answered ${first.statusCode}: ${body}`);
}

const loadOf = (r, seconds) =>
  r.load === 'wrk'
    ? wrk({
        url: r.url,
        script: PACE_MS === undefined ? 'fixed.lua' : 'paced.lua',
        connections: CONNECTIONS,
        seconds,
        env: { BENCH_PATH: HIT_PATH, BENCH_TOKEN: token, BENCH_DELAY_MS: String(PACE_MS) },
      })
    : nodeLoad(r, seconds);
await Promise.all(rows.map((r) => loadOf(r, 1)));
const cpuOf = (r) => ({ gateway: cpuUs(r.gateway.child.pid), nginx: r.nginx ? cpuUs(r.nginx.child.pid) : 0 });
for (const r of rows) r.runs = [];
for (let round = 0; round < ROUNDS; round++) {
  log(`TLS hit, c=${CONNECTIONS}, round ${round + 1}/${ROUNDS}: all rows at once`);
  const before = rows.map(cpuOf);
  const results = await Promise.all(rows.map((r) => loadOf(r, SECONDS)));
  rows.forEach((r, i) => {
    const after = cpuOf(r);
    const n = results[i].requests;
    r.runs.push({
      ...results[i],
      gateway: (after.gateway - before[i].gateway) / n,
      nginx: (after.nginx - before[i].nginx) / n,
    });
  });
}

const med = (r, key) => median(r.runs.map((x) => x[key]));
const plainCpu = med(rows[0], 'gateway');
const nodeBase = rows.find((r) => r.load === 'node');
const out = [
  [
    'row',
    'load',
    'req/s',
    'gateway CPU µs/req',
    'nginx CPU µs/req',
    'total CPU µs/req',
    'total vs first of its load',
    'non-2xx/errors',
  ],
];
for (const r of rows) {
  const total = med(r, 'gateway') + med(r, 'nginx');
  const base = r.load === 'wrk' ? plainCpu : med(nodeBase, 'gateway');
  out.push([
    r.name,
    r.load === 'wrk' ? 'wrk' : 'Node client (undici)',
    med(r, 'rps').toFixed(0),
    med(r, 'gateway').toFixed(1),
    r.nginx ? med(r, 'nginx').toFixed(1) : '',
    total.toFixed(1),
    `${(total / base).toFixed(2)}x`,
    String(r.runs.reduce((k, x) => k + (x.errors ?? 0) + (x.non2xx ?? 0), 0)),
  ]);
}
process.stdout.write(
  `\nTLS hit at ${CONNECTIONS} kept-alive connections per row${PACE_MS === undefined ? '' : `, each pausing ${PACE_MS} ms after an answer`}, medians of ${ROUNDS} rounds of ${SECONDS} s, every row loaded at once ` +
    `(${new Date().toISOString()}, node ${process.version}, ${execFileSync('openssl', ['version']).toString().trim()}; ` +
    `${canPin ? 'gateways and nginx on core 0, wrk and the Node client on core 1' : 'not pinned'})\n${table(out)}\n`,
);

for (const r of rows) {
  r.gateway.child.send({ type: 'stop' });
  r.nginx?.child.kill('SIGQUIT');
  await r.dispatcher.close();
}
await simulator.close();
setTimeout(() => process.exit(0), 500).unref();
