// Every block of docs/api.md and docs/workers.md a reader is asked to run, run as written against `npm start`'s demo
// (its client `demo-client`, the secret it prints, the numbers it lists): the shell blocks by bash with curl, the
// JavaScript blocks by node as ES modules. The demo listens on a free port here, not 8080: the one change made to a
// block is that origin. docs/workers.md's "Run it locally" is run by its own test (local-recipe.test.ts).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { startNodeGateway, type RunningGateway } from '../../src/runtime/node/gateway.js';
import { freePort } from '../helpers/free-port.js';
import { loginAt } from '../helpers/stack.js';
import { captureLogger } from '../helpers/recorders.js';
import { checkRequirement, commandRequirement } from '../helpers/requires.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC_ORIGIN = 'http://localhost:8080';
const hasCurl = checkRequirement(commandRequirement('curl', ['--version'], 'the curl command'));

interface Block {
  lang: string;
  code: string;
}

function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  // Fences may be indented (a block inside a list item).
  return [...text.matchAll(/^[ \t]*```(\w*)\n([\s\S]*?)^[ \t]*```/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** A block's commands: lines joined where they continue (`\`), comments and blank lines dropped. */
function commandsOf(code: string): { command: string; expected?: string }[] {
  return code
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const comment = /\s+# (\{.*\})$/.exec(line);
      return comment ? { command: line.slice(0, comment.index), expected: comment[1] } : { command: line };
    });
}

function run(file: string, args: string[], env: Record<string, string>, cwd = ROOT) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      file,
      args,
      { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(!hasCurl)('the examples of docs/api.md and docs/workers.md, against the demo', () => {
  let gateway: RunningGateway;
  let origin: string;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'callerid-doc-examples-'));
  const api = blocksOf('docs/api.md');

  beforeAll(async () => {
    // `npm start` without an upstream: demo mode, as the README starts it (on free ports instead of 8080 and 9464).
    gateway = await startNodeGateway(
      { PORT: '0', HOST: '127.0.0.1', METRICS_PORT: String(await freePort()) },
      { logger: captureLogger() },
    );
    origin = gateway.url;
    const secret = gateway.demo!.clientSecret;
    const login = () => loginAt(origin, gateway.demo!.clientId, secret);
    env = { SECRET: secret, CLIENT_SECRET: secret, TOKEN: await login(), OLD_TOKEN: await login() };
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  afterAll(async () => {
    await gateway?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('use the demo’s port and client', () => {
    expect(parseConfig({}).port).toBe(8080);
    expect(gateway.demo?.clientId).toBe('demo-client');
    for (const block of api.filter((b) => b.lang === 'sh' || b.lang === 'js')) {
      expect(block.code).toContain(DOC_ORIGIN);
      expect(block.code).not.toMatch(/\bcrm\b|example\.com|process\.env\.\w+!/);
    }
  });

  it('docs/api.md: every shell command answers what the doc shows after it', async () => {
    const blocks = api;
    const sh = blocks.filter((b) => b.lang === 'sh');
    expect(sh.length).toBe(6);
    for (const block of sh) {
      // The JSON block right after a shell block is what it prints.
      const next = blocks[blocks.indexOf(block) + 1];
      const shown = next?.lang === 'json' ? next.code : undefined;
      for (const { command, expected } of commandsOf(block.code)) {
        const out = await run('bash', ['-c', command.replaceAll(DOC_ORIGIN, origin)], env);
        expect(out.code, `${command}\n${out.stderr}`).toBe(0);
        // A revocation answers 200 with no body (RFC 7009 section 2.2): the doc shows none.
        if (command.includes('/oauth2/revoke')) {
          expect([out.stdout, shown]).toEqual(['', undefined]);
          const search = `${origin}/v2/contacts/search?what=%2B442079460001`;
          const revoked = await fetch(search, { headers: { authorization: `Bearer ${env.OLD_TOKEN}` } });
          expect(revoked.status).toBe(401);
          continue;
        }
        const answer = JSON.parse(out.stdout) as Record<string, unknown>;
        // Never a problem (application/problem+json has type, title, status).
        expect(answer.status, `${command}: ${out.stdout}`).toBeUndefined();
        const doc = expected ?? (commandsOf(block.code).length === 1 ? shown : undefined);
        if (doc !== undefined) {
          const want = JSON.parse(doc) as Record<string, unknown>;
          expect(Object.keys(answer).sort(), command).toEqual(Object.keys(want).sort());
          if ('reach' in want) expect(answer.reach).toBe(want.reach);
          if ('clientId' in want) expect(answer.clientId).toBe(want.clientId);
        }
        if ('query' in answer) expect(answer).toMatchObject({ query: { what: '+442079460001' }, total: 2 });
      }
    }
  });

  it('docs/api.md: both OAuth library examples log in, and openid-client’s searches a demo number', async () => {
    const js = api.filter((b) => b.lang === 'js');
    expect(js.length).toBe(2);
    for (const [i, block] of js.entries()) {
      const file = join(dir, `example-${i}.mjs`);
      // What the example ends with, printed: its token, and the answer of its search where it makes one.
      const shown =
        "console.log(JSON.stringify({ token: typeof access_token, status: typeof res === 'undefined' ? null : res.status," +
        " body: typeof res === 'undefined' ? null : await res.json() }));\n";
      writeFileSync(file, block.code.replaceAll(DOC_ORIGIN, origin) + shown);
      const out = await run(process.execPath, [file], env, dir);
      expect(out.code, out.stderr).toBe(0);
      const result = JSON.parse(out.stdout) as { token: string; status: number | null; body: unknown };
      expect(result.token).toBe('string');
      if (result.status !== null) {
        expect(result.status).toBe(200);
        expect(result.body).toMatchObject({ query: { what: '+442079460001' }, total: 2 });
      }
    }
    expect(js.map((b) => b.code).join('\n')).toContain('fetchProtectedResource');
  });

  it('docs/workers.md: the recipe is run by its own test, and the one other block needs a Cloudflare account', () => {
    const sh = blocksOf('docs/workers.md').filter((b) => b.lang === 'sh');
    const recipeTest = readFileSync(join(ROOT, 'test/runtime/workers/wrangler-dev/local-recipe.test.ts'), 'utf8');
    expect(recipeTest).toContain("doc.indexOf('## Run it locally')");
    expect(sh.slice(0, 3).map((b) => b.code.split('\n')[0])).toEqual([
      'npm run simulator',
      'cp .dev.vars.example .dev.vars',
      expect.stringMatching(/^TOKEN=\$\(curl /),
    ]);
    // `wrangler secret put` stores a secret in an account: nothing to run it against here.
    expect(sh.length).toBe(4);
    expect(commandsOf(sh[3]!.code).every(({ command }) => command.startsWith('npx wrangler secret put '))).toBe(true);
  });
});
