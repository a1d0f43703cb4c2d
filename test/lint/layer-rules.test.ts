// The layer rules of .dependency-cruiser.cjs, proven against the lint itself: for each rule, a small tree laid
// out like src/ in a temporary directory with one import that breaks it (for the domain's Hono rule, also an import
// of Hono reached through other files of the domain or the base) fails `npm run lint`'s depcruise step
// with that rule's name (and no other); a tree that keeps every rule, the Node root's Redis exception included,
// passes. The lint's CLI runs twice; the other trees go through the API it calls, in this process.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, type ICruiseOptions } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const { forbidden } = createRequire(import.meta.url)(CONFIG) as { forbidden: { name: string }[] };

type Tree = Record<string, string>;

/** A module that imports `specifiers` (type-only where marked `type:`), and exports one value. */
const importing = (...specifiers: string[]): string =>
  specifiers
    .map((s) => (s.startsWith('type:') ? `import type {} from '${s.slice(5)}';\n` : `import '${s}';\n`))
    .join('') + 'export const value = 1;\n';
const leaf = importing();

interface Case {
  rule: string;
  /** What the one violating import is, for the test's name. */
  what: string;
  tree: Tree;
}

const cases: Case[] = [
  {
    rule: 'no-file-cycle',
    what: 'lookup/a.ts and lookup/b.ts import each other',
    tree: { 'src/lookup/a.ts': importing('./b.js'), 'src/lookup/b.ts': importing('./a.js') },
  },
  {
    rule: 'no-folder-cycle',
    what: 'lookup/ imports guard/, which imports lookup/ (no file cycle)',
    tree: {
      'src/lookup/a.ts': importing('../guard/b.js'),
      'src/guard/b.ts': leaf,
      'src/guard/c.ts': importing('../lookup/d.js'),
      'src/lookup/d.ts': leaf,
    },
  },
  {
    rule: 'core-not-runtime',
    what: 'lookup/ imports runtime/node/',
    tree: { 'src/lookup/a.ts': importing('../runtime/node/http.js'), 'src/runtime/node/http.ts': leaf },
  },
  {
    rule: 'core-web-apis-only',
    what: 'routes/ imports node:crypto',
    tree: { 'src/routes/a.ts': importing('node:crypto') },
  },
  {
    rule: 'core-no-runtime-packages',
    what: 'app/app.ts imports pino',
    tree: { 'src/app/app.ts': importing('pino') },
  },
  ...(['operations/cnam', 'docs', 'middleware'] as const).map((folder): Case => ({
    rule: 'runtime-below-the-app',
    what: `runtime/node/ imports ${folder}/`,
    tree: { 'src/runtime/node/a.ts': importing(`../../${folder}/b.js`), [`src/${folder}/b.ts`]: leaf },
  })),
  {
    rule: 'runtime-below-the-app',
    what: "runtime/node/ imports the search operation's route (not its renderer)",
    tree: {
      'src/runtime/node/a.ts': importing('../../operations/search/search-route.js'),
      'src/operations/search/search-route.ts': leaf,
    },
  },
  {
    rule: 'runtime-below-the-app',
    what: 'runtime/workers/ imports http/app-env.ts (type only)',
    tree: { 'src/runtime/workers/main.ts': importing('type:../../http/app-env.js'), 'src/http/app-env.ts': leaf },
  },
  {
    rule: 'domain-without-hono',
    what: "guard/ imports a type from 'hono'",
    tree: { 'src/guard/a.ts': importing('type:hono') },
  },
  {
    rule: 'domain-without-hono',
    what: 'auth/ imports hono/utils/jwt/jwt',
    tree: { 'src/auth/a.ts': importing('hono/utils/jwt/jwt') },
  },
  {
    rule: 'domain-without-hono',
    what: 'observability/ imports @hono/node-server',
    tree: { 'src/observability/a.ts': importing('@hono/node-server') },
  },
  {
    rule: 'domain-without-hono',
    what: "base/errors.ts imports 'hono/http-exception' (the base is held to the domain's rule)",
    tree: { 'src/base/errors.ts': importing('hono/http-exception') },
  },
  {
    rule: 'domain-without-hono',
    what: "search/ reaches 'hono/http-exception' through a file no other rule names (shared/errors.ts)",
    tree: {
      'src/search/a.ts': importing('../shared/errors.js'),
      'src/shared/errors.ts': importing('hono/http-exception'),
    },
  },
  {
    rule: 'domain-without-hono',
    what: "lookup/ reaches a type of 'hono' two files away (util/b.ts, then util/c.ts)",
    tree: {
      'src/lookup/a.ts': importing('../util/b.js'),
      'src/util/b.ts': importing('./c.js'),
      'src/util/c.ts': importing('type:hono'),
    },
  },
  {
    rule: 'domain-without-hono',
    what: "the search renderer Node's listener calls imports 'hono'",
    tree: { 'src/operations/search/search-json.ts': importing('hono') },
  },
  {
    rule: 'domain-below-routes',
    what: 'search/ imports http/app-env.ts (type only)',
    tree: { 'src/search/a.ts': importing('type:../http/app-env.js'), 'src/http/app-env.ts': leaf },
  },
  {
    rule: 'domain-without-hono',
    what: "request/ imports 'hono'",
    tree: { 'src/request/a.ts': importing('hono') },
  },
  {
    rule: 'domain-below-routes',
    what: 'lookup/ imports operations/',
    tree: { 'src/lookup/a.ts': importing('../operations/cnam/b.js'), 'src/operations/cnam/b.ts': leaf },
  },
  {
    rule: 'domain-below-routes',
    what: 'shared-state/ imports services/',
    tree: { 'src/shared-state/a.ts': importing('type:../services/services.js'), 'src/services/services.ts': leaf },
  },
  {
    rule: 'domain-below-routes',
    what: 'config/ imports app/',
    tree: { 'src/config/a.ts': importing('../app/app.js'), 'src/app/app.ts': leaf },
  },
  {
    rule: 'base-at-the-bottom',
    what: 'base/errors.ts imports observability/ (type only)',
    tree: { 'src/base/errors.ts': importing('type:../observability/logger.js'), 'src/observability/logger.ts': leaf },
  },
  {
    rule: 'ports-below-domain',
    what: 'observability/ imports lookup/',
    tree: { 'src/observability/a.ts': importing('type:../lookup/types.js'), 'src/lookup/types.ts': leaf },
  },
  {
    rule: 'redis-alone',
    what: 'runtime/redis/ imports runtime/node/',
    tree: { 'src/runtime/redis/a.ts': importing('../node/b.js'), 'src/runtime/node/b.ts': leaf },
  },
  {
    rule: 'workers-alone',
    what: 'runtime/workers/ imports runtime/redis/',
    tree: { 'src/runtime/workers/a.ts': importing('../redis/b.js'), 'src/runtime/redis/b.ts': leaf },
  },
  {
    rule: 'node-not-workers',
    what: 'the Node composition root imports runtime/workers/',
    tree: { 'src/runtime/node/gateway.ts': importing('../workers/b.js'), 'src/runtime/workers/b.ts': leaf },
  },
  {
    rule: 'node-composes-redis-only-at-its-root',
    what: 'runtime/node/http.ts (not the root) imports runtime/redis/',
    tree: { 'src/runtime/node/http.ts': importing('../redis/client.js'), 'src/runtime/redis/client.ts': leaf },
  },
  {
    rule: 'simulator-stands-alone',
    what: 'simulator/ imports config/',
    tree: { 'src/simulator/a.ts': importing('../config/config.js'), 'src/config/config.ts': leaf },
  },
];

/**
 * Every layer, importing only what the rules allow: the Node root builds the Redis adapters, Node's search door calls
 * the search renderer, the app and the operations use Hono.
 */
const cleanTree: Tree = {
  'src/base/clock.ts': leaf,
  'src/base/errors.ts': leaf,
  'src/config/config.ts': importing('./settings-table.js'),
  'src/config/settings-table.ts': leaf,
  'src/http/app-env.ts': importing('type:../observability/request-recorder.js', 'type:../search/outcome.js'),
  'src/observability/request-recorder.ts': importing('../base/clock.js'),
  'src/shared-state/counter-store.ts': importing('../base/errors.js'),
  'src/lookup/types.ts': leaf,
  'src/lookup/lookup-service.ts': importing('./types.js', '../shared-state/counter-store.js', '../config/config.js'),
  'src/auth/gateway-tokens.ts': importing('lru-cache', '../base/clock.js'),
  'src/search/outcome.ts': importing('../lookup/lookup-service.js', '../auth/gateway-tokens.js'),
  'src/operations/search/search-json.ts': importing('../../search/outcome.js', '../../base/errors.js'),
  'src/operations/search/search-route.ts': importing('hono', 'type:../../http/app-env.js', './search-json.js'),
  'src/middleware/log.ts': importing('type:hono', '../observability/request-recorder.js'),
  'src/services/services.ts': importing('../operations/search/search-json.js', 'type:../lookup/types.js'),
  'src/app/app.ts': importing(
    'hono/http-exception',
    '../operations/search/search-route.js',
    '../middleware/log.js',
    'type:../services/services.js',
  ),
  'src/runtime/redis/client.ts': importing('ioredis', '../../shared-state/counter-store.js'),
  'src/runtime/workers/main.ts': importing('../../app/app.js', '../../services/services.js'),
  'src/runtime/node/http.ts': importing('undici', 'node:http'),
  'src/runtime/node/search-door.ts': importing('../../operations/search/search-json.js'),
  'src/runtime/node/gateway.ts': importing(
    '../../app/app.js',
    '../../services/services.js',
    './http.js',
    './search-door.js',
    '../redis/client.js',
  ),
  'src/simulator/app.ts': importing('hono', '../base/clock.js'),
};

/** The depcruise step of `npm run lint`, as package.json spells it: what it cruises, with which configuration. */
async function lintStep(): Promise<{ target: string; args: string[] }> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const step = pkg.scripts['lint']!.split('&&')
    .map((s) => s.trim())
    .find((s) => s.startsWith('depcruise '));
  const match = /^depcruise (\S+) --config (\S+)$/.exec(step ?? '');
  if (!match) throw new Error(`npm run lint has no depcruise step of the expected form: ${step}`);
  expect(resolve(ROOT, match[2]!)).toBe(CONFIG);
  return { target: match[1]!, args: [match[1]!, '--config', CONFIG] };
}

let base: string;
let step: { target: string; args: string[] };
let tsconfig: string;
let options: ICruiseOptions;
let trees = 0;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'layer-rules-'));
  step = await lintStep();
  const { compilerOptions } = JSON.parse(await readFile(join(ROOT, 'tsconfig.json'), 'utf8')) as {
    compilerOptions: unknown;
  };
  tsconfig = JSON.stringify({ compilerOptions, include: ['src'] });
  options = await extractDepcruiseOptions(CONFIG);
});

afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

/** Writes the tree beside the project's packages, so hono, pino and ioredis resolve as they do from src/. */
async function writeTree(tree: Tree): Promise<string> {
  const dir = join(base, `tree-${++trees}`);
  await mkdir(dir);
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await writeFile(join(dir, 'tsconfig.json'), tsconfig);
  for (const [path, text] of Object.entries(tree)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

interface Verdict {
  code: number;
  /** The rule of each `error <rule>: <from> → <to>` line the lint printed. */
  rules: string[];
}

function verdict(code: number, output: string): Verdict {
  const rules = [...output.matchAll(/^\s*error ([\w-]+): \S+ →/gm)].map((m) => m[1]!);
  if (code !== 0 && rules.length === 0) throw new Error(`depcruise failed without a violation:\n${output}`);
  return { code, rules };
}

/** The lint's own command (the depcruise CLI) in the tree's directory. */
async function lintWithCli(tree: Tree): Promise<Verdict> {
  const dir = await writeTree(tree);
  // A TypeScript start and a cruise: seconds on a quiet machine, a minute or more on a loaded one (the test's own
  // timeout is the heavy files' 120 s); a CLI that fails otherwise fails the test, not the run.
  return new Promise((done, fail) => {
    execFile(
      join(ROOT, 'node_modules/.bin/depcruise'),
      step.args,
      { cwd: dir, timeout: 110_000 },
      (err, out, errOut) => {
        try {
          done(verdict(err === null ? 0 : typeof err.code === 'number' ? err.code : -1, out + errOut));
        } catch (failure) {
          fail(failure as Error);
        }
      },
    );
  });
}

/**
 * The same cruise through dependency-cruiser's API in this process (what the CLI calls after reading its options),
 * which spares a process and a TypeScript start per tree.
 */
async function lint(tree: Tree): Promise<Verdict> {
  const dir = await writeTree(tree);
  const tsConfigFile = join(dir, 'tsconfig.json');
  const result = await cruise(
    [step.target],
    { ...structuredClone(options), baseDir: dir, tsConfig: { fileName: tsConfigFile }, outputType: 'err' },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  return verdict(result.exitCode, String(result.output));
}

describe('the layer rules of npm run lint', () => {
  it('has a violating tree for every rule of .dependency-cruiser.cjs', () => {
    const tried = new Set(cases.map((c) => c.rule));
    expect(forbidden.map((r) => r.name).filter((name) => !tried.has(name))).toEqual([]);
    expect([...tried].filter((name) => !forbidden.some((r) => r.name === name))).toEqual([]);
  });

  it("passes a tree that keeps every rule, the Node root building the Redis adapters included (the lint's CLI)", async () => {
    expect(await lintWithCli(cleanTree)).toEqual({ code: 0, rules: [] });
  });

  it("fails a runtime adapter importing a route, with the rule's name (the lint's CLI)", async () => {
    const [violating] = cases.filter((c) => c.rule === 'runtime-below-the-app');
    const { code, rules } = await lintWithCli(violating!.tree);
    expect(code).not.toBe(0);
    expect(rules).toEqual(['runtime-below-the-app']);
  });

  it('passes the same clean tree through the API', async () => {
    expect(await lint(cleanTree)).toEqual({ code: 0, rules: [] });
  });

  describe('fails a tree with one violating import, naming its rule and no other', () => {
    for (const { rule, what, tree } of cases) {
      it(`${rule}: ${what}`, async () => {
        const { code, rules } = await lint(tree);
        expect(code).not.toBe(0);
        expect(new Set(rules)).toEqual(new Set([rule]));
      });
    }
  });
});
