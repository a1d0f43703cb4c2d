// Test runner configuration: unit and integration tests in Node, real sockets on loopback ports.
import { defineConfig } from 'vitest/config';

/**
 * Files that time answers to the millisecond under load (Redis failovers, deadlines, slow clients, floods, log pipes)
 * or keep both CPUs busy on their own (Chromium, wrangler and workerd, tsc, npm, depcruise, Prometheus, Kamailio):
 * they run one at a time, after the others, so no other file takes the CPU their bounds count on.
 */
const ALONE = [
  'test/browser/*.test.ts',
  'test/container/*.test.ts',
  'test/runtime/workers/wrangler-dev/*.test.ts',
  'test/runtime/workers/workerd-serve/*.test.ts',
  'test/lint/*.test.ts',
  'test/ops/*.test.ts',
  'test/docs/openapi-lint.test.ts',
  'test/integration/kamailio-cnam.test.ts',
  'test/integration/login-*.test.ts',
  'test/integration/redis-*.test.ts',
  'test/integration/replicas-*.test.ts',
  'test/integration/cost-guard-*.test.ts',
  'test/integration/console-redis.test.ts',
  'test/integration/deadline.test.ts',
  'test/integration/slow-clients.test.ts',
  'test/integration/metrics-listener.test.ts',
  'test/integration/fair-share.test.ts',
  'test/integration/ops-shutdown.test.ts',
  'test/runtime/node/log-*.test.ts',
  'test/runtime/node/http.test.ts',
  'test/runtime/redis/client-hung.test.ts',
];
/** Files that mock a module (vi.mock) the others import for real: they get modules of their own. */
const OWN_MODULES = [
  'test/runtime/node/log-destination.test.ts',
  // Asserts that nothing reaches stderr while it runs: a Redis client an earlier file left reconnecting would.
  'test/integration/redis-misconfigured.test.ts',
];
// These run inside workerd: vitest.workers.config.ts (`npm run test:workerd`).
const WORKERD = ['test/runtime/workers/vitest-pool/**', '**/node_modules/**'];

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A worker keeps the modules it imported for its next file (each file still starts its own servers, stacks and
    // processes, and closes them): the gateway's module graph is imported once per worker, not once per file.
    isolate: false,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...WORKERD, ...ALONE],
          // The rest wait on sockets, child processes and timers more than on the CPU: three files at a time.
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          exclude: [...WORKERD, ...OWN_MODULES],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'own-modules',
          include: OWN_MODULES,
          isolate: true,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
