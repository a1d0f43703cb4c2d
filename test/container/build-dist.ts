// Builds the production dist/ into a temporary directory (tsc -p tsconfig.build.json --outDir), for tests
// that start the gateway the way the container does: `node dist/runtime/node/main.js`. One build per set of
// sources serves every test file of a run (each gets its own copy): the build is keyed by the hash of what tsc reads.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cp, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

export const REPO = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

export interface BuiltDist {
  /** The temporary directory holding `dist/`. */
  dir: string;
  cleanup(): Promise<void>;
}

/** What the build reads: the sources, the compiler settings and the installed packages' lock. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const files = readdirSync(join(REPO, 'src'), { recursive: true, encoding: 'utf8' }).sort();
  for (const file of [
    ...files.map((f) => join('src', f)),
    'tsconfig.json',
    'tsconfig.build.json',
    'package-lock.json',
  ]) {
    if (!statSync(join(REPO, file)).isFile()) continue;
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(REPO, file)))
      .update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** tsc into `outDir`; type errors still emit JavaScript: only a build without an entry point fails. */
async function compile(outDir: string): Promise<void> {
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await run(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir, '--sourceMap', 'false'], {
      cwd: REPO,
      timeout: 120_000,
    });
  } catch (err) {
    if (!existsSync(join(outDir, 'runtime', 'node', 'main.js'))) throw err;
  }
}

/** The dist/ of the current sources, built by the first caller (a lock directory) and kept for the others. */
async function sharedBuild(): Promise<string> {
  const cached = join(tmpdir(), `callerid-dist-${sourcesHash()}`);
  const lock = `${cached}.lock`;
  for (let waited = 0; !existsSync(join(cached, 'built')); waited += 200) {
    try {
      mkdirSync(lock);
    } catch {
      // Another file builds it: wait, unless its lock is older than any build (a run that was killed).
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (waited > 180_000 || age > 180_000) rmSync(lock, { recursive: true, force: true });
      await sleep(200);
      continue;
    }
    try {
      rmSync(cached, { recursive: true, force: true });
      await compile(join(cached, 'dist'));
      writeFileSync(join(cached, 'built'), '');
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return join(cached, 'dist');
}

export async function buildDist(prefix = 'callerid-dist-'): Promise<BuiltDist> {
  const dist = await sharedBuild();
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await cp(dist, join(dir, 'dist'), { recursive: true });
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** dist/ built and runnable where it is: an ES module package resolving its packages from the repository's node_modules. */
export async function buildRunnableDist(prefix: string): Promise<BuiltDist> {
  const built = await buildDist(prefix);
  await writeFile(join(built.dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await symlink(join(REPO, 'node_modules'), join(built.dir, 'node_modules'), 'dir');
  return built;
}

/** The environment of a production gateway on a free port in front of the simulator at `simulatorUrl`. */
export function productionGatewayEnv(options: {
  simulatorUrl: string;
  upstreamClientId: string;
  upstreamSecret: string;
  signingKey: string;
  /** GATEWAY_CLIENTS: `id:sha256-of-secret`. */
  clients: string;
}): Record<string, string> {
  return {
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_AUTH_URL: options.simulatorUrl,
    UPSTREAM_BASE_URL: options.simulatorUrl,
    UPSTREAM_CLIENT_ID: options.upstreamClientId,
    UPSTREAM_CLIENT_SECRET: options.upstreamSecret,
    GATEWAY_TOKEN_SECRET: options.signingKey,
    GATEWAY_CLIENTS: options.clients,
    DEFAULT_REGION: 'GB',
    PUBLIC_BASE_URL: 'https://callerid.example.com',
    // /metrics beside the API: parallel gateways cannot all have the default 9464.
    METRICS_PORT: '0',
  };
}

export interface GatewayProcess {
  child: ChildProcess;
  /** The API port, from the JSON start line. */
  port: number;
  /** Every stdout line so far, parsed when it is JSON. */
  lines: Array<Record<string, unknown>>;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process ends. */
  exited: Promise<number | string | null>;
}

/** Starts `node dist/runtime/node/main.js` in `dir` and waits for its JSON start line. */
export function startGatewayProcess(
  dir: string,
  env: Record<string, string>,
  nodeBinary = process.execPath,
): Promise<GatewayProcess> {
  const child = spawn(nodeBinary, ['dist/runtime/node/main.js'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal)),
  );
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start line within 20 s; stderr: ${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { text: line };
      }
      lines.push(parsed);
      if (parsed.event === 'start') {
        clearTimeout(timer);
        resolve({ child, port: Number(parsed.port), lines, stderr: () => stderr, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${String(code)}) before starting; stderr: ${stderr}`));
    });
  });
}
