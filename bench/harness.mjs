// Shared by the bench scripts: server children pinned to the server core, wrk pinned to the load core, the CPU time a
// process used (from /proc), the build step, and a baseline build of an earlier commit for before/after runs. Each script makes one harness; nothing is kept at module level.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { baselineRef } from './baselines.mjs';

export const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..');
export const LUA = join(here, 'lua');
export const SERVER_CORE = '0';
export const LOAD_CORE = '1';
const benchStarted = Date.now();
/** A progress line on stderr, with the seconds since this process started. */
export const log = (line) =>
  process.stderr.write(`[${((Date.now() - benchStarted) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

export function createHarness() {
  const canPin =
    process.platform === 'linux' && cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  const pinned = (core, cmd, args) => (canPin ? ['taskset', ['-c', core, cmd, ...args]] : [cmd, args]);
  const children = [];
  const TICK_US = 1e6 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

  function startChild(script, env, core = SERVER_CORE) {
    const [cmd, args] = pinned(core, process.execPath, ['--expose-gc', join(here, script)]);
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.push(child);
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${script} exited (${code}) before it was ready`)));
      child.once('message', (msg) => resolve({ child, url: msg.url }));
    });
  }
  const ask = (child, type) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send({ type });
    });
  function stopAll() {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }
  process.on('exit', stopAll);

  /** CPU time a process has used in user space and in the kernel, in microseconds; null where /proc is missing. */
  function cpuSplitUs(pid) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return { user: Number(fields[11]) * TICK_US, system: Number(fields[12]) * TICK_US };
    } catch {
      return null;
    }
  }
  /** CPU time (user + system) a process has used, in microseconds; null where /proc is missing. */
  function cpuUs(pid) {
    const split = cpuSplitUs(pid);
    return split === null ? null : split.user + split.system;
  }
  /**
   * Runs `measure` and adds the server's CPU microseconds per request (`cpuPerReq`, and of it `userPerReq` in user
   * space): stable where wall-clock req/s is noisy.
   */
  async function withCpu(pid, measure) {
    const before = cpuSplitUs(pid);
    const r = await measure();
    const after = cpuSplitUs(pid);
    const per = (key) => (before === null || after === null ? NaN : (after[key] - before[key]) / r.requests);
    r.userPerReq = per('user');
    r.cpuPerReq = r.userPerReq + per('system');
    return r;
  }

  /** Runs wrk (1 thread) with a Lua script; resolves with its BENCH_JSON summary. Asynchronous: the simulator lives here. */
  function wrk({ url, script, connections, seconds, env = {} }) {
    const [cmd, args] = pinned(LOAD_CORE, 'wrk', [
      '-t1',
      `-c${connections}`,
      `-d${seconds}s`,
      '--timeout',
      '5s',
      '-s',
      join(LUA, script),
      url,
    ]);
    return new Promise((resolve, reject) => {
      const proc = spawn(cmd, args, { env: { ...process.env, BENCH_LUA_DIR: LUA, ...env } });
      let out = '';
      proc.stdout.on('data', (d) => (out += d));
      proc.stderr.on('data', (d) => (out += d));
      proc.on('close', () => {
        const line = out.split('\n').find((l) => l.startsWith('BENCH_JSON '));
        if (!line) return reject(new Error(`wrk gave no summary:\n${out}`));
        const r = JSON.parse(line.slice(11));
        r.rps = r.requests / (r.durationUs / 1e6);
        resolve(r);
      });
    });
  }

  return { canPin, pinned, children, startChild, ask, stopAll, cpuUs, cpuSplitUs, withCpu, wrk };
}

/** The bench client's secret; `bench` is its id (an admin client too). */
export const BENCH_CLIENT_SECRET = 'bench-client-secret-0123456789';
/** The simulator's credentials for the benched gateways. */
export const BENCH_UPSTREAM_CLIENTS = { 'bench-gateway': 'bench-upstream-secret' };

/** A gateway token for the bench's client from the gateway at `url`. */
export async function benchLogin(url) {
  const login = await fetch(`${url}/token/login`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: 'bench',
      client_secret: BENCH_CLIENT_SECRET,
    }),
  });
  return (await login.json()).access_token;
}

/** The environment of a benched gateway in front of the simulator at `simulatorUrl`. */
export function benchGatewayEnv(simulatorUrl) {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_AUTH_URL: simulatorUrl,
    UPSTREAM_BASE_URL: simulatorUrl,
    UPSTREAM_CLIENT_ID: 'bench-gateway',
    UPSTREAM_CLIENT_SECRET: BENCH_UPSTREAM_CLIENTS['bench-gateway'],
    GATEWAY_TOKEN_SECRET: 'bench-signing-key-at-least-32-bytes-long!!',
    GATEWAY_CLIENTS: `bench:${createHash('sha256').update(BENCH_CLIENT_SECRET).digest('hex')}`,
    GATEWAY_ADMIN_CLIENTS: 'bench',
    DEFAULT_REGION: 'GB',
    NODE_ENV: 'production',
    PUBLIC_BASE_URL: 'https://callerid.example.com',
    // One client drives all the load: its per-minute rate (default 600) would turn the run into 429s.
    CLIENT_RATE_PER_MINUTE: '10000000',
    // /metrics beside the API, where the replicas bench reads it (the default 9464 would be one port for all).
    METRICS_PORT: '0',
  };
}

/** Builds dist/ with tsc unless `--no-build`; the bench runs the built gateway. */
export function build() {
  log('building dist/ (tsc -p tsconfig.build.json)');
  const built = process.argv.includes('--no-build')
    ? { status: 0 }
    : spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0)
    log(`tsc reported errors (emitting anyway):\n${built.stdout.split('\n').slice(0, 5).join('\n')}`);
  if (!existsSync(join(root, 'dist/runtime/node/gateway.js')))
    throw new Error('dist/runtime/node/gateway.js missing after build');
}

// The named baselines live in bench/baselines.mjs; the scripts import them from here with the rest.
export { BASELINES, DEFAULT_BASELINE, baselineRef } from './baselines.mjs';

/**
 * The targets the before/after tables state beside the measured values: a cache hit costs at most 1.5x the server
 * CPU of bare node:http answering the same body (bare/gateway >= 0.67); a miss adds at most 0.35 ms at p50 over
 * calling the upstream directly, and at most 300 µs of gateway CPU.
 */
export const TARGETS = { hitCpuRatio: 0.67, missAddedP50Ms: 0.35, missCpuUs: 300 };

/**
 * The gateway of git `ref`, built in a temporary directory (git archive, its own runtime dependencies, this checkout's tsc),
 * removed at exit; resolves to its bench server script relative to bench/. Null when `ref` is not in this clone.
 */
export function buildBaseline(name) {
  const ref = baselineRef(name);
  if (spawnSync('git', ['-C', root, 'cat-file', '-e', `${ref}^{commit}`]).status !== 0) {
    log(`baseline ${ref} is not in this clone (a shallow clone?): skipped`);
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), 'callerid-baseline-'));
  log(`building the baseline ${name === ref ? ref : `${name} (${ref})`} in ${dir}`);
  const archive = spawnSync('sh', ['-c', `git -C "${root}" archive "${ref}" | tar -x -C "${dir}"`], {
    encoding: 'utf8',
  });
  if (archive.status !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr}`);
  // Its own runtime dependencies, from its own lockfile (a dependency may have come or gone since); this
  // checkout's tsc and type packages build it (type errors there do not stop tsc from emitting the same JS).
  const install = spawnSync(
    'npm',
    ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: dir, encoding: 'utf8' },
  );
  if (install.status !== 0) throw new Error(`npm ci in the baseline ${ref} failed: ${install.stderr.slice(0, 500)}`);
  if (!existsSync(join(dir, 'node_modules/@types')))
    symlinkSync(join(root, 'node_modules/@types'), join(dir, 'node_modules/@types'));
  spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], { cwd: dir, encoding: 'utf8' });
  // Either layout: the runtime folders (node/gateway.js) or the flat one of earlier builds (node-gateway.js).
  if (!['dist/runtime/node/gateway.js', 'dist/runtime/node-gateway.js'].some((f) => existsSync(join(dir, f))))
    throw new Error(`the baseline ${ref} did not build`);
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return relative(here, join(dir, 'bench/servers/gateway.mjs'));
}

/** Median of numbers. */
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A Markdown table of rows (the first is the header). */
export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

/** The value after `name` on the command line, or `fallback`. */
export function arg(name, fallback) {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
}

/**
 * Listed numbers +44 20 3xxx xxxx for the simulator's directory, so every miss answers a positive-sized body like a
 * real listing; `provider` is the simulator's SwissDir (from dist/simulator/directory.js).
 */
export function syntheticDirectory(count, provider) {
  return Array.from({ length: count }, (_, i) => {
    const digits = String(i).padStart(7, '0');
    const e164 = `+44203${digits}`;
    return {
      id: `swissdir:bench${digits}`,
      provider,
      type: 'person',
      displayName: `Benchmark Person ${digits}`,
      person: { givenName: 'Person', familyName: `Benchmark ${digits}` },
      organization: null,
      phones: [{ e164, display: `020 3${digits.slice(0, 3)} ${digits.slice(3)}`, kind: 'landline' }],
      address: { street: `${i % 200} Benchmark Street`, postalCode: 'EC1A 1BB', locality: 'London', country: 'GB' },
    };
  });
}
