// Test runner configuration: the unit tests beside their code in src/ and the integration tests of test/ in Node,
// real sockets on loopback ports.
import { defineConfig } from 'vitest/config';

/**
 * Files that time answers to the millisecond (Redis failovers, deadlines, slow clients, log pipes, Retry-After
 * windows, a healthcheck's 3 s, sipp's pauses, an identity provider that never answers, a stalled TLS handshake, a
 * revocation racing 150 logins): they run one at a time so no other file of this suite takes the CPU
 * their bounds count on: here after the others; under `npm test` (test/run-all.mjs) from the start, in a vitest of
 * their own at the ordinary priority, with the other projects niced beside them.
 */
const ALONE = [
  'test/container/production-start.test.ts',
  'test/integration/kamailio-cnam.test.ts',
  'test/integration/kamailio-cnam-mtls.test.ts',
  'test/integration/redis-*.test.ts',
  'test/integration/replicas-*.test.ts',
  'test/integration/cost-guard-*.test.ts',
  'test/integration/console-redis.test.ts',
  'test/integration/deadline.test.ts',
  'test/integration/slow-clients.test.ts',
  'test/integration/metrics-listener.test.ts',
  'test/integration/fair-share.test.ts',
  'test/integration/federated-*.test.ts',
  'test/integration/tls-listener.test.ts',
  'test/integration/revocation-faults.test.ts',
  'test/integration/login-throttle-slow-redis.test.ts',
  'test/integration/ops-shutdown.test.ts',
  'test/runtime/node/log-*.test.ts',
  'test/runtime/node/http.test.ts',
  'test/runtime/redis/client-hung.test.ts',
];
/**
 * Files that keep a CPU or two busy (Chromium, wrangler and workerd, tsc, npm, depcruise, Prometheus, Spectral, the
 * login floods) but bound no answer's time: they run with the shared files, before the timing-bound ones.
 */
const HEAVY = [
  'test/browser/*.test.ts',
  'test/container/npm-start.test.ts',
  'test/container/start-errors.test.ts',
  'test/runtime/workers/wrangler-dev/*.test.ts',
  'test/runtime/workers/workerd-serve/*.test.ts',
  'test/lint/*.test.ts',
  'test/ops/*.test.ts',
  'test/docs/openapi-lint.test.ts',
  'test/integration/login-throttle.test.ts',
];
/** Files that mock a module (vi.mock) the others import for real: they get modules of their own. */
const OWN_MODULES = ['test/runtime/node/log-destination.test.ts'];
/**
 * Files that read what their whole process does, each in a process and modules of its own: one asserts that nothing
 * reaches stderr while it runs (a Redis client an earlier file left reconnecting would), the login flood measures the
 * heap its gateway keeps (what an earlier file left in the same process would count too). They bound no answer's
 * time: they run with the shared files.
 */
const APART = ['test/integration/redis-misconfigured.test.ts', 'test/integration/login-flood.test.ts'];
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
          include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...WORKERD, ...ALONE, ...HEAVY, ...APART],
          // They wait on sockets, child processes and timers more than on the CPU: three files at a time, with the
          // heavy ones and the one apart (one group: the same order and number of workers). vitest starts a group's
          // projects in the order of their names, each one's longest files first: `apart` (a minute of waiting),
          // then `heavy`, then these.
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        // Their time is the machine's (Chromium, depcruise, tsc): the timeout catches a hang, not a slow machine.
        test: { name: 'heavy', include: HEAVY, maxWorkers: 3, testTimeout: 120_000, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'apart', include: APART, isolate: true, maxWorkers: 3, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          exclude: [...WORKERD, ...OWN_MODULES, ...APART],
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
