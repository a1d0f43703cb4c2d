// `wrangler deploy --dry-run` builds the Worker from wrangler.toml: the bundle, its Durable Object classes and
// every binding docs/workers.md documents, without an account or a network.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { wranglerPresent } from '../../../helpers/wrangler-dev.js';

const run = promisify(execFile);

describe.skipIf(!wranglerPresent())('wrangler deploy --dry-run', () => {
  let outdir: string | undefined;
  afterAll(async () => {
    if (outdir) await rm(outdir, { recursive: true, force: true });
  });

  it('bundles the Worker with its Durable Objects, the Analytics Engine dataset and the vars', async () => {
    outdir = await mkdtemp(join(tmpdir(), 'callerid-wrangler-'));
    const { stdout } = await run('npx', ['wrangler', 'deploy', '--dry-run', '--outdir', outdir], {
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      timeout: 120_000,
    });
    expect(stdout).toMatch(/env\.UPSTREAM_TOKEN \(UpstreamTokenObject\)\s+Durable Object/);
    expect(stdout).toMatch(/env\.COUNTERS \(CounterObject\)\s+Durable Object/);
    expect(stdout).toMatch(/env\.ANALYTICS \(callerid_gateway_requests\)\s+Analytics Engine Dataset/);
    const bundle = await readFile(join(outdir, 'main.js'), 'utf8');
    // The runtime instantiates Durable Objects from the entry module's exports.
    expect(bundle).toMatch(/export\s*\{[^}]*\bUpstreamTokenObject\b[^}]*\}/);
    expect(bundle).toMatch(/export\s*\{[^}]*\bCounterObject\b[^}]*\}/);
  }, 150_000);
});
