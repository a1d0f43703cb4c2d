// Test runner configuration for the tests inside real workerd (@cloudflare/vitest-pool-workers): the Worker's
// Durable Objects, Cache API and bindings from wrangler.toml, against the simulator on a loopback port.
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { workerdBindings } from './test/runtime/workers/vitest-pool/workerd-env.js';

export default defineConfig({
  plugins: [
    {
      // @cloudflare/vitest-pool-workers 0.15.1 cannot resolve `require('process')` from CommonJS (prom-client):
      // node:process is missing from its list of workerd built-ins. Wrangler's own bundle has no such problem.
      name: 'workerd-process-shim',
      enforce: 'pre',
      resolveId: (id: string) =>
        id === 'process' || id === 'node:process'
          ? fileURLToPath(new URL('./test/runtime/workers/vitest-pool/process-shim.cjs', import.meta.url))
          : null,
    },
    {
      // oauth4webapi and openid-client ship source maps whose sources they do not publish: their code is loaded
      // without the map (nothing to show from it), so a passing run prints no "points to missing source files".
      name: 'no-unpublished-source-maps',
      enforce: 'pre',
      load: (id: string) =>
        /\/node_modules\/(?:oauth4webapi|openid-client)\/build\/index\.js$/.test(id)
          ? { code: readFileSync(id, 'utf8'), map: null }
          : null,
    },
    cloudflareTest(({ inject }) => ({
      main: './src/runtime/workers/main.ts',
      // wrangler.toml itself, seen from a directory of the tests (a symlink): wrangler reads `.dev.vars` beside the
      // config it is given, so a developer's own `.dev.vars` at the root never reaches these tests.
      wrangler: { configPath: './test/runtime/workers/vitest-pool/wrangler.toml' },
      miniflare: {
        bindings: workerdBindings(inject('simulatorUrl'), inject('otlpUrl')),
        // Test-only: Durable Objects that answer after the isolates' deadline (late-objects.js), for the fallback tests.
        durableObjects: { LATE_COUNTERS: { className: 'LateCounterObject', scriptName: 'late-objects' } },
        workers: [
          {
            name: 'late-objects',
            modules: true,
            scriptPath: fileURLToPath(new URL('./test/runtime/workers/vitest-pool/late-objects.js', import.meta.url)),
            compatibilityDate: '2026-04-01',
          },
        ],
      },
    })),
  ],
  test: {
    include: ['test/runtime/workers/vitest-pool/**/*.test.ts'],
    globalSetup: ['test/runtime/workers/vitest-pool/simulator-global-setup.ts'],
    // One simulator and one set of Durable Objects for all files: files run one after another.
    fileParallelism: false,
    // The Worker's log lines (console.log in workerd) are shown for a failing test only.
    silent: 'passed-only',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
