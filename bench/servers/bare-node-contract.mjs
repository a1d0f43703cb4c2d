// Bench child: a bare node:http server answering the same body from a Map with what every answer of the gateway's
// search carries and none of its logic: the same eight header fields (a new request id, the client's remaining rate
// counting down, `Age` and `Cache-Status` from a stored time) and one access-log line per request, made by the
// gateway's own request recorder and written by its own log destination (from dist/, so build first). The least a
// server that keeps the search's contract costs on Node here: what is left between it and the gateway is the
// gateway's own work (token, number, rate, cache, cost guard, metrics).
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createNodeLogger } from '../../dist/runtime/node/node-logger.js';
import { createKeyedHasher } from '../../dist/observability/keyed-hash.js';
import { createRequestRecorder } from '../../dist/observability/request-recorder.js';

const body = readFileSync(process.env.BENCH_BODY_FILE, 'utf8');
const bytes = new TextEncoder().encode(body);
const number = process.env.BENCH_NUMBER;
const bodies = new Map([[number, bytes]]);
const storedAt = Date.now();
const TTL = 86_400;
const RATE = 10_000_000;
let remaining = RATE;

const record = createRequestRecorder({
  logger: createNodeLogger('info'),
  hasher: createKeyedHasher({
    key: 'bench',
    syncHmac: (key, data) => createHmac('sha256', key).update(data).digest('hex'),
  }),
});

const server = createServer((req, res) => {
  const started = performance.now();
  const url = req.url ?? '';
  const at = url.indexOf('what=');
  const what = at === -1 ? undefined : decodeURIComponent(url.slice(at + 5));
  const found = what === undefined ? undefined : bodies.get(what);
  if (found === undefined) {
    res.writeHead(404).end();
    return;
  }
  const now = Date.now();
  const age = Math.floor((now - storedAt) / 1000);
  const requestId = crypto.randomUUID();
  remaining = remaining > 0 ? remaining - 1 : RATE;
  res.writeHead(200, {
    'content-type': 'application/json',
    'cache-control': 'private, no-store',
    'cache-status': `callerid-gateway; hit; ttl=${TTL - age}`,
    age: String(age),
    'ratelimit-policy': `"client";q=${RATE};w=60`,
    ratelimit: `"client";r=${remaining};t=${60 - (Math.floor(now / 1000) % 60)}`,
    'x-request-id': requestId,
    'content-length': String(found.byteLength),
  });
  res.end(found);
  record({
    requestId,
    method: 'GET',
    route: '/v2/contacts/search',
    status: 200,
    elapsedMs: performance.now() - started,
    clientId: 'bench',
    lookup: { e164: what, cache: 'hit' },
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}` }));
process.on('message', (msg) => msg?.type === 'stop' && process.exit(0));
