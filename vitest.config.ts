// Test runner configuration: unit and integration tests in Node, real sockets on loopback ports.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // These run inside workerd: vitest.workers.config.ts (`npm run test:workerd`).
    exclude: ['test/runtime/workers/vitest-pool/**', '**/node_modules/**'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
