// `node bench/profile-hit.mjs [seconds] [--miss]`: CPU profile (node --cpu-prof) of the gateway's cache-hit path
// under wrk (or, with --miss, distinct uncached numbers at 1 connection), then the top self-time functions and
// the share per package. Build first (`npm run build`). Loopback only.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSimulatorServer } from '../dist/simulator/server.js';

const here = dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 6);
const missMode = process.argv.includes('--miss');
const profDir = mkdtempSync(join(tmpdir(), 'callerid-prof-'));
const simulator = await startSimulatorServer({ clients: { gw: 'gw-secret' } });
const secret = 'profile-client-secret-0123456789';
const child = spawn(
  'taskset',
  ['-c', '0', process.execPath, '--cpu-prof', '--cpu-prof-dir', profDir, join(here, 'servers/gateway.mjs')],
  {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_AUTH_URL: simulator.url,
      UPSTREAM_BASE_URL: simulator.url,
      UPSTREAM_CLIENT_ID: 'gw',
      UPSTREAM_CLIENT_SECRET: 'gw-secret',
      GATEWAY_TOKEN_SECRET: 'profile-signing-key-at-least-32-bytes!!',
      GATEWAY_CLIENTS: `p:${createHash('sha256').update(secret).digest('hex')}`,
      DEFAULT_REGION: 'GB',
      METRICS_PORT: '0',
      // One client drives all the load: its per-minute rate (default 600) would turn the run into 429s.
      CLIENT_RATE_PER_MINUTE: '10000000',
    },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  },
);
const { url } = await new Promise((resolve) => child.once('message', resolve));
const token = (
  await (
    await fetch(`${url}/token/login`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'p', client_secret: secret }),
    })
  ).json()
).access_token;
const path = '/v2/contacts/search?what=%2B442079460010';
await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${token}` } });
const load = missMode
  ? ['wrk', '-t1', '-c1', `-d${seconds}s`, '-s', join(here, 'lua/distinct.lua'), url]
  : ['wrk', '-t1', '-c50', `-d${seconds}s`, '-H', `Authorization: Bearer ${token}`, `${url}${path}`];
const loadEnv = {
  ...process.env,
  BENCH_LUA_DIR: join(here, 'lua'),
  BENCH_START: '0',
  BENCH_TOKEN: token,
  BENCH_BASE_PATH: '/v2/contacts/search',
};
await new Promise((resolve) =>
  spawn('taskset', ['-c', '1', ...load], { stdio: 'inherit', env: loadEnv }).on('close', resolve),
);
child.send({ type: 'stop' });
await new Promise((resolve) => child.on('exit', resolve));
await simulator.close();

const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fnTime = new Map();
const pkgTime = new Map();
for (const [id, t] of self) {
  const { callFrame: cf } = byId.get(id);
  const where = cf.url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, 'nm:')
    .replace(/.*\/dist\//, 'dist/');
  const key = `${cf.functionName || '(anonymous)'}  ${where}:${cf.lineNumber + 1}`;
  fnTime.set(key, (fnTime.get(key) ?? 0) + t);
  const pkg =
    cf.url === ''
      ? `(${cf.functionName || 'native'})`
      : where.startsWith('nm:')
        ? where
            .split('/')
            .slice(0, where.startsWith('nm:@') ? 2 : 1)
            .join('/')
        : where.startsWith('dist/')
          ? where
          : 'node:internal';
  pkgTime.set(pkg, (pkgTime.get(pkg) ?? 0) + t);
}
// Inclusive time per function (each function counted once per stack, so recursion is not double counted).
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, t] of self) {
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const { callFrame: cf } = byId.get(at);
    const key = `${cf.functionName || '(anonymous)'}  ${cf.url
      .replace(/^file:\/\//, '')
      .replace(/.*node_modules\//, 'nm:')
      .replace(/.*\/dist\//, 'dist/')}:${cf.lineNumber + 1}`;
    if (seen.has(key)) continue;
    seen.add(key);
    incl.set(key, (incl.get(key) ?? 0) + t);
  }
}
const top = (m, n) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
console.log(
  `\nprofile: ${join(profDir, file)}\n\ntop self time by function:\n${top(fnTime, 35).join('\n')}\n\ninclusive time by function:\n${top(incl, 45).join('\n')}\n\nby package / file:\n${top(pkgTime, 25).join('\n')}`,
);
