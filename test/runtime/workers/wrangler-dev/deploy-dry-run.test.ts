// `wrangler deploy --dry-run` builds the Worker from wrangler.toml: the bundle, its Durable Object classes and
// every binding docs/workers.md documents, without an account or a network.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
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
    // A small bundle starts a new isolate quickly: at most 172 KiB gzipped (docs/workers.md, "Bundle and start-up"),
    // neither all of zod's core nor a Prometheus client (a scrape would reach one isolate) in it.
    expect(gzipSync(bundle).length).toBeLessThanOrEqual(172 * 1024);
    expect(stdout).toMatch(/Total Upload: [\d.]+ KiB \/ gzip: (\d+)/);
    expect(Number(/gzip: ([\d.]+) KiB/.exec(stdout)![1])).toBeLessThanOrEqual(172);
    expect(bundle).not.toContain('prom-client');
    expect(bundle).not.toContain('toJSONSchema(schema');
  }, 150_000);

  it('turns Workers Logs on and minifies the bundle', async () => {
    const toml = await readFile(new URL('../../../../wrangler.toml', import.meta.url), 'utf8');
    expect(toml).toMatch(/^\[observability\]\nenabled = true$/m);
    expect(toml).toMatch(/^minify = true$/m);
  });
});
