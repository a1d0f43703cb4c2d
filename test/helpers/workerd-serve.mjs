// Runs the Worker build as workerd itself serves it (`workerd serve`, no wrangler proxy in front): the bundle
// `wrangler deploy --dry-run` makes, with text bindings, on a loopback port, reaching only local addresses. Plain
// JavaScript (types in workerd-serve.d.mts): the tests and the benchmarks (bench/traced-hit.mjs) start it alike.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.mjs';

const run = promisify(execFile);
const WORKERD = 'node_modules/workerd/bin/workerd';

function capnpConfig(port, bindings) {
  const text = Object.entries(bindings)
    .map(([name, value]) => `    (name = ${JSON.stringify(name)}, text = ${JSON.stringify(value)}),`)
    .join('\n');
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .gateway), (name = "loopback", network = (allow = ["local"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const gateway :Workerd.Worker = (
  modules = [ (name = "main.js", esModule = embed "main.js") ],
  compatibilityDate = "2026-04-01",
  compatibilityFlags = ["nodejs_compat"],
  bindings = [
${text}
  ],
  globalOutbound = "loopback",
);
`;
}

/** Bundles the Worker, starts workerd with `bindings` (under `wrap`, e.g. taskset) and waits until /healthz answers. */
export async function startWorkerdServe(bindings, wrap = []) {
  const dir = await mkdtemp(join(tmpdir(), 'callerid-workerd-'));
  let workerd;
  const close = async () => {
    workerd?.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', dir], {
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      timeout: 120_000,
    });
    const port = await freePort();
    await writeFile(join(dir, 'gateway.capnp'), capnpConfig(port, bindings));
    const [command, ...args] = [...wrap, join(process.cwd(), WORKERD), 'serve', 'gateway.capnp'];
    workerd = spawn(command, args, { cwd: dir, stdio: 'ignore' });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        if ((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).status === 200) break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return { url, pid: workerd.pid, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The Worker with a Node gateway's settings as its bindings (what only a listener reads left out), quiet, and the
 * PUBLIC_BASE_URL a Worker requires.
 */
export function startWorkerdLike(env, wrap = []) {
  const vars = Object.entries(env).filter((entry) => !['PORT', 'HOST'].includes(entry[0]) && Boolean(entry[1]));
  return startWorkerdServe(
    { PUBLIC_BASE_URL: 'http://localhost', ...Object.fromEntries(vars), LOG_LEVEL: 'silent' },
    wrap,
  );
}
