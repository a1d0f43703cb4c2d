// What .ci/run gives a fresh Debian 12: every command the tests and benchmarks spawn is installed by it (its
// `parts` list) or ships with every Debian (Essential packages) or with Node; the README's apt-get line names the
// same packages; an older Node is refused with one line.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CI_RUN = readFileSync(join(ROOT, '.ci/run'), 'utf8');

/** Commands every Debian 12 has (Essential: coreutils, util-linux, bash, dash, libc-bin, tar) or Node brings. */
const BASE = new Set(['sh', 'bash', 'mkfifo', 'taskset', 'unshare', 'getconf', 'tar', 'seq', 'sleep', 'cp', 'sed']);
const WITH_NODE = new Set(['node', 'npm', 'npx']);

/** `.ci/run`'s `parts`: command → Debian package. */
function ciParts(): Map<string, string> {
  const block = /^parts=\(\n([\s\S]*?)^\)/m.exec(CI_RUN)?.[1] ?? '';
  return new Map([...block.matchAll(/^\s+([\w.-]+):([\w.-]+)/gm)].map((m) => [m[1]!, m[2]!]));
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mts|mjs|js)$/.test(f) && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

/** Every command named where a test or benchmark starts a process, checks for one or reads its binary's path. */
function spawnedCommands(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [
    // spawn('x', …), execFileSync('x', …), run('x', …), a pinned (taskset) command, commandRequirement('x', …)
    /\b(?:spawn|spawnSync|execFile|execFileSync|run|commandRequirement)\(\s*'([^']+)'/g,
    /\bpinned\(\s*\w+,\s*'([^']+)'/g,
    // The last of a list of alternative commands ([['docker', 'compose'], ['docker-compose']]).
    /\['[\w-]+', '[\w-]+'\], \['([\w-]+)'\]\]/g,
    // `command -v x` in a shell line, and absolute binaries (fileRequirement('/usr/bin/x'), X_BIN = '/usr/bin/x').
    /command -v ([\w-]+)/g,
    /'\/usr\/bin\/([\w-]+)'/g,
  ];
  for (const file of [...sources('test'), ...sources('bench')]) {
    if (file === join('test', 'ci', 'fresh-machine.test.ts')) continue;
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const pattern of patterns)
      for (const m of text.matchAll(pattern)) if (!found.has(basename(m[1]!))) found.set(basename(m[1]!), file);
  }
  // The shell the Worker recipe test writes around docs/workers.md's blocks, and those blocks' own commands.
  const recipe = readFileSync(join(ROOT, 'test/runtime/workers/wrangler-dev/local-recipe.test.ts'), 'utf8');
  for (const m of recipe.matchAll(/'(ip|curl) /g)) found.set(m[1]!, 'the Worker recipe script');
  const doc = readFileSync(join(ROOT, 'docs/workers.md'), 'utf8');
  for (const block of doc.matchAll(/```sh\n([\s\S]*?)```/g))
    for (const line of block[1]!.split('\n')) {
      // The first word after any NAME=value prefix (`TOKEN=$(curl …`, `NAME=false npx …`).
      const word = /^([\w.-]+)/.exec(
        line
          .trim()
          .replace(/^\w+=\$\(/, '')
          .replace(/^(\w+=\S*\s+)+/, ''),
      )?.[1];
      if (word) found.set(word, 'docs/workers.md');
    }
  return found;
}

describe('.ci/run on a fresh Debian 12', () => {
  const parts = ciParts();
  const spawned = spawnedCommands();

  it('installs or finds every command the tests and benchmarks spawn', () => {
    // The scan sees what the issue of a fresh machine was: curl, ip and git, and the real parts.
    for (const known of ['curl', 'ip', 'git', 'unshare', 'redis-server', 'redis-cli', 'promtool', 'sipp', 'wrk'])
      expect(spawned.has(known), known).toBe(true);
    const unprovided = [...spawned]
      .filter(([command]) => !parts.has(command) && !BASE.has(command) && !WITH_NODE.has(command))
      // `docker compose` is used where it runs; docker-compose (installed) is the fallback. workerd comes with
      // npm ci; tini is the container image's PID 1 (the Dockerfile installs it), read there, never run here.
      .filter(([command]) => !['docker', 'workerd', 'tini'].includes(command))
      .map(([command, file]) => `${command} (${file})`);
    expect(unprovided).toEqual([]);
  });

  it('lists each command once, with a package apt-get knows by that name', () => {
    expect(parts.size).toBeGreaterThan(10);
    for (const [command, pkg] of parts) expect(pkg, command).toMatch(/^[a-z0-9][a-z0-9.+-]+$/);
    expect(CI_RUN).toContain('need+=(kamailio-utils-modules)');
  });

  it("the README's apt-get line names the same packages", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    const line = /apt-get install -y ([a-z0-9 .+-]+)`/.exec(readme)?.[1]?.trim().split(' ');
    expect(new Set(line)).toEqual(new Set([...parts.values(), 'kamailio-utils-modules']));
  });

  it('refuses a Node older than the engines field with one line, before installing anything', () => {
    const dir = mkdtempSync(join(tmpdir(), 'callerid-old-node-'));
    try {
      // A node that says it is 20.11.0 (the real binary, its version overridden before any script runs).
      writeFileSync(
        join(dir, 'old.cjs'),
        "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.11.0' } });\n" +
          "Object.defineProperty(process, 'version', { value: 'v20.11.0' });\n",
      );
      writeFileSync(join(dir, 'node'), `#!/bin/sh\nexec ${process.execPath} --require ${join(dir, 'old.cjs')} "$@"\n`);
      chmodSync(join(dir, 'node'), 0o755);
      const run = spawnSync('bash', [join(ROOT, '.ci/run')], {
        env: { ...process.env, PATH: `${dir}:${process.env.PATH}` },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toEqual([
        'ci: node v20.11.0 is too old: this project needs >=20.19.0 (vitest 4 and wrangler refuse older)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
