// docs/workers.md's "Run it locally", followed as a newcomer would: on a copy of the repository's tracked files
// (node_modules linked in place of `npm ci`), the doc's own shell blocks run as written, in a network namespace of
// their own so the doc's fixed ports (9000, 8787) are free (and a process namespace that ends both servers), until the
// pasted search answers with a contact and the console answers, offline without wrangler's request.cf warning.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRequirement, commandRequirement } from '../../../helpers/requires.js';
import { wranglerPresent } from '../../../helpers/wrangler-dev.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const canIsolate = checkRequirement(
  commandRequirement(
    'unshare',
    ['-rnpf', 'ip', 'link', 'set', 'lo', 'up'],
    'unshare -rn and ip (util-linux, iproute2)',
  ),
);
const run = wranglerPresent() && canIsolate;

/** The ```sh blocks of the "Run it locally" section, in order. */
function recipeBlocks(): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/workers.md'), 'utf8');
  const section = doc.slice(
    doc.indexOf('## Run it locally'),
    doc.indexOf('\n## ', doc.indexOf('## Run it locally') + 3),
  );
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim().split('\n'));
}

describe.skipIf(!run)('the local recipe of docs/workers.md', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callerid-recipe-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the pasted search with a contact, using only the commands the doc gives', async () => {
    const [simulator, worker, client] = recipeBlocks();
    expect(simulator).toEqual(['npm run simulator']);
    expect(worker?.at(-1)).toBe('CLOUDFLARE_CF_FETCH_ENABLED=false npx wrangler dev');
    expect(client).toHaveLength(2);

    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const file of files) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      cpSync(join(ROOT, file), join(dir, file));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    // The terminals of the doc: the two servers in the background, each waited for; then the pasted commands.
    const waitFor = (url: string) => `for i in $(seq 1 240); do curl -s -o /dev/null ${url} && break; sleep 0.5; done`;
    const script = [
      'set -e',
      'ip link set lo up',
      `cd ${JSON.stringify(dir)}`,
      `(${simulator!.join('\n')}) > simulator.log 2>&1 &`,
      waitFor('http://127.0.0.1:9000/'),
      ...worker!.slice(0, -1),
      `(${worker!.at(-1)}) > wrangler.log 2>&1 &`,
      waitFor('http://127.0.0.1:8787/healthz'),
      ...client!,
      // The console the doc points to, as on `npm start` (CONSOLE_PROVIDER from .dev.vars.example).
      "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8787/console > console.status",
      '',
    ].join('\n');
    writeFileSync(join(dir, 'recipe.sh'), script);
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      // A PID namespace too: when the script ends, the kernel ends the two servers it left running.
      // The doc's own command sets CLOUDFLARE_CF_FETCH_ENABLED, so none comes from this process (CI sets it).
      const { CLOUDFLARE_CF_FETCH_ENABLED: _fromCi, ...env } = process.env;
      const child = spawn('unshare', ['-rnpf', '--kill-child', 'bash', join(dir, 'recipe.sh')], {
        env: { ...env, WRANGLER_SEND_METRICS: 'false' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
    const logs = () =>
      ['simulator.log', 'wrangler.log']
        .map((f) => {
          try {
            return `${f}:\n${readFileSync(join(dir, f), 'utf8').slice(-3000)}`;
          } catch {
            return `${f}: none`;
          }
        })
        .join('\n');
    expect(out.code, `${out.stderr}\n${logs()}`).toBe(0);
    // The search's answer: JSON with the normalised number and the simulator's two contacts (a problem would differ):
    // the README's national spelling reads as a UK number, as on `npm start` (DEFAULT_REGION=GB).
    const answer = JSON.parse(out.stdout) as { query: { what: string }; total: number };
    expect(answer.query.what).toBe('+442079460001');
    expect(answer.total).toBe(2);
    expect(readFileSync(join(dir, 'console.status'), 'utf8')).toBe('200');
    // Offline (a network namespace of its own) and quiet: no failed download of Cloudflare's request.cf sample.
    expect(readFileSync(join(dir, 'wrangler.log'), 'utf8')).not.toMatch(/Unable to fetch the Request\.cf object/);
  }, 300_000);
});
