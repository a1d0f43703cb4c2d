// `node bench/span-cost.mjs [dist-dir]`: the CPU one recorded server span costs in the tracer and the encoder alone
// (start, its attributes, end, protobuf encoding as it ends, a body every 512) and its encoded size, for a built dist/ (this
// checkout's by default; a baseline's to compare). 500,000 spans after 200,000 to warm up; no I/O.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = pathToFileURL(resolve(process.argv[2] ?? 'dist')).href;
const { createTracer } = await import(`${dist}/observability/tracing/tracer.js`);
const { startServerSpan, endServerSpan } = await import(`${dist}/observability/tracing/http-spans.js`);
const { ProtobufSpanQueue } = await import(`${dist}/observability/tracing/otlp-protobuf.js`);
const queue = new ProtobufSpanQueue({ serviceName: 'x', scopeName: 'y' });
const tracer = createTracer(
  { name: 'always_on', ratio: 1, callerPerSecond: 100 },
  { now: () => performance.now(), end: (s) => queue.push(s) },
);
const req = {
  method: 'GET',
  route: '/v2/contacts/search',
  traceparent: undefined,
  tracestate: undefined,
  scheme: 'http',
  path: '/v2/contacts/search',
  serverAddress: '127.0.0.1',
  serverPort: 8080,
  protocolVersion: '1.1',
  userAgent: undefined,
  clientAddress: '127.0.0.1',
};
let bytes = 0;
function round(n) {
  for (let i = 0; i < n; i++) {
    const s = startServerSpan(tracer, req, () => req);
    endServerSpan(s, { status: 200, cacheStatus: 'hit', clientId: 'crm' });
    if (queue.length === 512) bytes += queue.take(512).length;
  }
}
round(200000);
const t = process.cpuUsage();
bytes = 0;
round(500000);
const u = process.cpuUsage(t);
console.log(dist, ((u.user + u.system) / 500000).toFixed(3), 'µs/span', (bytes / 500000).toFixed(0), 'bytes/span');
