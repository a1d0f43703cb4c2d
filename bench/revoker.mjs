// `npm run bench:revoker`: what a client looping login + revoke costs the other replicas. Two gateway replicas share
// a redis-server of this bench's own (a free port); the revoker logs in and revokes at replica A as fast as it
// can, spread over REVOKER_CLIENTS registered clients so that the total bound (REVOCATIONS_MAX) is reached, while
// replica B (which only hears the revocations) reports its event-loop delay (perf_hooks monitorEventLoopDelay,
// 1 ms resolution) and its heap after full collections. Also: the memory of one list entry (this process, the built
// RevocationList filled to the bound) and of one denylist entry in Redis (INFO memory before and after).
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import {
  arg,
  BENCH_CLIENT_SECRET,
  BENCH_UPSTREAM_CLIENTS,
  benchGatewayEnv,
  build,
  createHarness,
  log,
  table,
} from './harness.mjs';

const quick = process.argv.includes('--quick');
const SECONDS = Number(arg('--seconds', quick ? 15 : 60));
const CONCURRENCY = 8;
const REVOKER_CLIENTS = 25;
const TOTAL = 20_000;
const PER_CLIENT = 1000;
const TARGET_P99_MS = 20;

build();
const { startChild, ask, children } = createHarness();
const { startSimulatorServer } = await import('../dist/simulator/server.js');
const { RevocationList } = await import('../dist/auth/revocations.js');
const { Redis } = await import('ioredis');

/** A free loopback port. */
const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

// --- the memory of one list entry, in this process ---------------------------------------------------------------
function heapAfterGc() {
  for (let i = 0; i < 3; i++) globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}
const heapBefore = heapAfterGc();
const list = new RevocationList({ perClient: PER_CLIENT, total: TOTAL });
const now = Date.now();
for (let i = 0; i < TOTAL; i++) {
  const clientId = `rev${i % REVOKER_CLIENTS}`;
  list.add({ kind: 'token', jti: randomUUID(), clientId, issuedAt: now + i, until: now + 90_000_000 });
}
const bytesPerListEntry = (heapAfterGc() - heapBefore) / list.size;
log(
  `list: ${list.size} entries, ${bytesPerListEntry.toFixed(0)} bytes of heap each${globalThis.gc ? '' : ' (no --expose-gc: rough)'}`,
);

// --- set-up ---------------------------------------------------------------------------------------------------------
const redisPort = await freePort();
const redisServer = spawn(
  'redis-server',
  ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
  {
    stdio: 'ignore',
  },
);
children.push(redisServer);
const REDIS_URL = `redis://127.0.0.1:${redisPort}`;
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 50 });
// Refused until redis-server listens; ioredis tries again.
redis.on('error', () => {});
await redis.ping();
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]);

const simulator = await startSimulatorServer({ clients: BENCH_UPSTREAM_CLIENTS });
const secretHash = createHash('sha256').update(BENCH_CLIENT_SECRET).digest('hex');
const revokers = Array.from({ length: REVOKER_CLIENTS }, (_, i) => `rev${i}`);
const prefix = `bench-revoker-${randomUUID()}`;
const env = {
  ...benchGatewayEnv(simulator.url),
  LOG_LEVEL: 'error',
  REDIS_URL,
  REDIS_KEY_PREFIX: prefix,
  GATEWAY_CLIENTS: ['bench', ...revokers].map((id) => `${id}:${secretHash}`).join(','),
  REVOCATIONS_MAX: String(TOTAL),
  REVOCATIONS_PER_CLIENT_MAX: String(PER_CLIENT),
};
log(`starting a redis-server on ${redisPort}, the simulator and two replicas (A takes the revocations, B is watched)`);
const [a, b] = await Promise.all([startChild('servers/gateway.mjs', env), startChild('servers/gateway.mjs', env)]);
const memoryOf = async (replica) => ask(replica.child, 'memory');
const idle = await memoryOf(b);
const redisBefore = await usedMemory();

// --- the revoker ------------------------------------------------------------------------------------------------------
const form = (fields) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});
let revoked = 0;
let failed = 0;
async function loginAndRevoke(clientId) {
  const creds = { client_id: clientId, client_secret: BENCH_CLIENT_SECRET };
  const login = await fetch(`${a.url}/token/login`, form({ grant_type: 'client_credentials', ...creds }));
  const { access_token: token } = await login.json();
  const res = await fetch(`${a.url}/oauth2/revoke`, form({ token, ...creds }));
  await res.arrayBuffer();
  if (res.status === 200) revoked++;
  else failed++;
}

await ask(b.child, 'loop-delay-start');
log(`revoking for ${SECONDS} s, ${CONCURRENCY} at a time, over ${REVOKER_CLIENTS} clients`);
const until = performance.now() + SECONDS * 1000;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async (_, worker) => {
    for (let i = worker; performance.now() < until; i += CONCURRENCY)
      await loginAndRevoke(revokers[i % REVOKER_CLIENTS]);
  }),
);
const elapsed = (performance.now() - t0) / 1000;
// Two sync periods (5 s each) with the revoker stopped: the catch-up of the replicas, when there is nothing new.
await new Promise((r) => setTimeout(r, 11_000));
const delay = await ask(b.child, 'loop-delay');
const loaded = await memoryOf(b);
const redisAfter = await usedMemory();
const entries = (await redis.hlen(`{${prefix}:revoked}:data`)) - 1;

// --- a replica started now loads the denylist -------------------------------------------------------------------------
const startedAt = performance.now();
const c = await startChild('servers/gateway.mjs', env);
const startMs = performance.now() - startedAt;
const late = await memoryOf(c);

const mb = (bytes) => (bytes / 1024 ** 2).toFixed(1);
const boundMb = (TOTAL * bytesPerListEntry) / 1024 ** 2;
console.log();
console.log(
  table([
    ['figure', 'value'],
    [
      'revocations (200) / failed',
      `${revoked} / ${failed} in ${elapsed.toFixed(0)} s (${(revoked / elapsed).toFixed(0)}/s)`,
    ],
    ['entries in Redis (tokens + cuts)', String(entries)],
    ["B's list entries", String(loaded.revocations)],
    [
      "B's event-loop delay p50 / p99 / max (ms)",
      `${delay.p50.toFixed(2)} / ${delay.p99.toFixed(2)} / ${delay.max.toFixed(2)}`,
    ],
    ['target p99', `< ${TARGET_P99_MS} ms (${delay.p99 < TARGET_P99_MS ? 'met' : 'not met'})`],
    [
      "B's heap idle / after (MB)",
      `${mb(idle.heapUsed)} / ${mb(loaded.heapUsed)} (+${mb(loaded.heapUsed - idle.heapUsed)})`,
    ],
    ['list: bytes of heap per entry (in process)', bytesPerListEntry.toFixed(0)],
    [
      `documented bound: ${TOTAL} entries`,
      `${boundMb.toFixed(1)} MB (${loaded.heapUsed - idle.heapUsed <= boundMb * 1024 ** 2 ? 'within' : 'beyond'})`,
    ],
    ['Redis: bytes per entry', entries > 0 ? ((redisAfter - redisBefore) / entries).toFixed(0) : 'n/a'],
    ['a replica started now: ready in (ms), list entries', `${startMs.toFixed(0)}, ${late.revocations}`],
  ]),
);

redis.disconnect();
await simulator.close();
process.exit(0);
