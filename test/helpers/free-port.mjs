// A loopback port that was free a moment ago, for servers that must be told their port up front. Plain JavaScript
// (types in free-port.d.mts), so the helpers the benchmarks share use it too.
import { createServer } from 'node:net';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
