// Bench child: the upstream transports on Node side by side against one server (argv[2]): global fetch, undici
// dispatch with an Agent (src/runtime/node/http.ts), node:http with a keep-alive Agent. Prints one JSON line.
import { Agent, request as httpRequest } from 'node:http';
import { createFetchHttp } from '../dist/base/upstream-http.js';
import { createNodeHttp } from '../dist/runtime/node/http.js';

const target = process.argv[2];
const number = process.argv[3];
const seconds = Number(process.argv[4] ?? 2);
const url = `${target}/v2/contacts/search?what=${encodeURIComponent(number)}`;
const req = {
  method: 'GET',
  url,
  headers: { authorization: 'Bearer bench', accept: 'application/json' },
  timeoutMs: 3000,
};

/** The same UpstreamHttp contract over node:http, to measure it against undici. */
function createNodeCoreHttp() {
  const agent = new Agent({ keepAlive: true, maxSockets: 128, keepAliveMsecs: 30_000 });
  return {
    request(r) {
      return new Promise((resolve, reject) => {
        const out = httpRequest(
          r.url,
          { method: r.method, headers: r.headers, agent, signal: AbortSignal.timeout(r.timeoutMs) },
          (res) => {
            res.setEncoding('utf8');
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? null, body }),
            );
            res.on('error', reject);
          },
        );
        out.on('error', reject);
        out.end(r.body);
      });
    },
    close: async () => agent.destroy(),
  };
}

async function run(http, concurrency, ms) {
  const latencies = [];
  let count = 0;
  const end = performance.now() + ms;
  async function loop() {
    while (performance.now() < end) {
      const t = performance.now();
      const res = await http.request(req);
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      latencies.push(performance.now() - t);
      count++;
    }
  }
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rps: count / elapsed, p50: at(0.5), p99: at(0.99) };
}

const transports = {
  'global fetch': () => createFetchHttp(globalThis.fetch),
  'undici dispatch + Agent (this build)': () => createNodeHttp(),
  'node:http + keep-alive Agent': () => createNodeCoreHttp(),
};

const results = {};
for (const [name, make] of Object.entries(transports)) {
  const http = make();
  await run(http, 8, 500);
  const one = await run(http, 1, seconds * 1000);
  const fifty = await run(http, 50, seconds * 1000);
  results[name] = { c1: one, c50: fifty };
  await http.close?.();
}
process.stdout.write(`BENCH_JSON ${JSON.stringify(results)}\n`);
