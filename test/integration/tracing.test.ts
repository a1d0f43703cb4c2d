// One trace from the caller to the upstream over real sockets: the gateway exports to an OTLP/HTTP receiver that
// decodes with OpenTelemetry's own proto files, the simulator records the `traceparent` it receives; through Node's
// search door and through the app alike.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRequirement, tcpRequirement } from '../helpers/requires.js';
import type { Stack } from '../helpers/stack.js';
import { SPAN_KIND, startTracedStack, type TracedStack } from '../helpers/traced-stack.js';

const sharedRedis = checkRequirement(await tcpRequirement('127.0.0.1', 6379, 'Redis at 127.0.0.1:6379'));

const { SERVER, CLIENT, INTERNAL } = SPAN_KIND;

/** A caller's span context: a fresh trace id per test, so each test reads only its own spans. */
function callerContext(flags: '01' | '00') {
  const hex = (bytes: number) =>
    Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${flags}` };
}

describe.each([
  { door: "Node's search door", searchDoor: true },
  { door: 'the app', searchDoor: false },
])('tracing through $door', ({ searchDoor }) => {
  let traced: TracedStack;
  let stack: Stack;
  let crm: string;

  beforeAll(async () => {
    traced = await startTracedStack({ gateway: { searchDoor } });
    stack = traced.stack;
    crm = await stack.login('crm');
  });
  afterAll(() => traced.close());

  const spansOf = (traceId: string) => traced.spansOf(traceId);
  const requestLine = (traceId: string) => traced.requestLine('traceId', traceId);

  it("makes a miss the caller's child: server span, lookup, upstream client span named by the upstream's traceparent", async () => {
    const caller = callerContext('01');
    const res = await stack.search('+442079460011', crm, { headers: { traceparent: caller.traceparent } });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await spansOf(caller.traceId);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server).toMatchObject({ name: 'GET /v2/contacts/search', parentSpanId: caller.spanId });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v2/contacts/search',
      'http.response.status_code': 200,
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'client.address': '127.0.0.1',
      'cache.status': 'miss',
      'gateway.client.id': 'crm',
    });
    const lookup = spans.find((s) => s.kind === INTERNAL && s.name === 'lookup')!;
    expect(lookup.parentSpanId).toBe(server.spanId);
    const upstream = spans.find((s) => s.kind === CLIENT && s.name === 'GET /v2/contacts/search')!;
    expect(upstream).toMatchObject({ name: 'GET /v2/contacts/search', parentSpanId: lookup.spanId });
    expect(upstream.attributes).toMatchObject({ 'http.response.status_code': 200, 'server.address': '127.0.0.1' });
    expect(stack.simulator.controls.stats().traceparentsSeen).toContain(`00-${caller.traceId}-${upstream.spanId}-01`);
    expect(requestLine(caller.traceId)?.fields.spanId).toBe(server.spanId);
    // The first search of a fresh gateway logs in upstream first: that login is this trace's too.
    const login = spans.find((s) => s.name === 'POST /token/login')!;
    expect(login).toMatchObject({ kind: CLIENT, parentSpanId: lookup.spanId });
    expect(login.attributes['http.response.status_code']).toBe(200);
    // Never the number: no run of its digits in any name or attribute.
    for (const span of spans)
      for (const text of [span.name, ...Object.values(span.attributes).map(String)])
        expect(text).not.toMatch(/7946\D?0011/);
  });

  it('makes a hit one span', async () => {
    await (await stack.search('+442079460012', crm)).text();
    const caller = callerContext('01');
    const res = await stack.search('+442079460012', crm, { headers: { traceparent: caller.traceparent } });
    expect(res.headers.get('cache-status')).toContain('hit');
    await res.text();
    const spans = await spansOf(caller.traceId);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.attributes['cache.status']).toBe('hit');
  });

  it("records nothing of a caller's unsampled trace and still passes it to the upstream", async () => {
    const caller = callerContext('00');
    const res = await stack.search('+442079460013', crm, { headers: { traceparent: caller.traceparent } });
    expect(res.status).toBe(200);
    await res.text();
    expect(await spansOf(caller.traceId)).toEqual([]);
    const seen = stack.simulator.controls.stats().traceparentsSeen.filter((t) => t.includes(caller.traceId));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-00$`));
    expect(requestLine(caller.traceId)).toBeDefined();
  });

  it('puts the trace id in the problem body and the log line of a refusal, and the problem type on the span', async () => {
    const caller = callerContext('01');
    const res = await stack.search('not a number', crm, { headers: { traceparent: caller.traceparent } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { traceId?: string; type: string; requestId: string };
    expect(body.traceId).toBe(caller.traceId);
    expect(requestLine(caller.traceId)?.fields.requestId).toBe(body.requestId);
    const [server] = await spansOf(caller.traceId);
    expect(server?.attributes['gateway.problem.type']).toBe(body.type);
    expect(server?.attributes['http.response.status_code']).toBe(400);
  });
});

describe.skipIf(!sharedRedis)('tracing a miss with the shared tier in Redis (127.0.0.1:6379)', () => {
  let traced: TracedStack;
  const prefix = `test-${randomUUID()}`;

  beforeAll(async () => {
    traced = await startTracedStack({
      env: {
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_KEY_PREFIX: prefix,
      },
    });
  });
  afterAll(async () => {
    await traced.close();
    const redis = new Redis('redis://127.0.0.1:6379');
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('puts the read of the tier and the wait for an upstream slot under the lookup', async () => {
    const caller = callerContext('01');
    const { stack } = traced;
    const res = await stack.search('+442079460014', await stack.login('crm'), {
      headers: { traceparent: caller.traceparent },
    });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await traced.spansOf(caller.traceId);
    const lookup = spans.find((s) => s.name === 'lookup')!;
    const tier = spans.find((s) => s.name === 'lookup redis')!;
    expect(tier).toMatchObject({ kind: INTERNAL, parentSpanId: lookup.spanId });
    expect(tier.attributes['lookup.tier.result']).toBe('absent');
    expect(spans.find((s) => s.name === 'guard queue')?.parentSpanId).toBe(lookup.spanId);
    expect(spans.find((s) => s.kind === CLIENT && s.name === 'GET /v2/contacts/search')?.parentSpanId).toBe(
      lookup.spanId,
    );
  });
});

describe("tracing a search that waits on another caller's work", () => {
  let traced: TracedStack;
  let crm: string;

  beforeAll(async () => {
    // Slow enough that a second search arrives while the first one's login and upstream call are in flight.
    traced = await startTracedStack({ simulator: { tokenLatencyMs: 300, latencyMs: 300 } });
    crm = await traced.stack.login('crm');
  });
  afterAll(() => traced.close());

  /** Two searches at once, each with a trace of its own; both answered 200. */
  const twoAtOnce = async (first: string, second: string) => {
    const callers = [callerContext('01'), callerContext('01')];
    const answers = await Promise.all(
      [first, second].map((what, i) =>
        traced.stack.search(what, crm, { headers: { traceparent: callers[i]!.traceparent } }),
      ),
    );
    for (const res of answers) {
      expect(res.status).toBe(200);
      await res.text();
    }
    return Promise.all(callers.map((c) => traced.spansOf(c.traceId)));
  };

  it('links a search that waited on the login another search started to that login', async () => {
    const traces = await twoAtOnce('+442079460015', '+442079460016');
    const loggedIn = traces.findIndex((spans) => spans.some((s) => s.name === 'POST /token/login'));
    expect(loggedIn).toBeGreaterThanOrEqual(0);
    const login = traces[loggedIn]!.find((s) => s.name === 'POST /token/login')!;
    const waiter = traces[1 - loggedIn]!;
    expect(waiter.some((s) => s.name === 'POST /token/login')).toBe(false);
    const wait = waiter.find((s) => s.name === 'token wait')!;
    expect(wait).toMatchObject({ kind: INTERNAL, parentSpanId: waiter.find((s) => s.name === 'lookup')!.spanId });
    expect(wait.links).toEqual([{ traceId: login.traceId, spanId: login.spanId }]);
  });

  it("links a search that joined another's upstream call to the lookup that made it", async () => {
    const traces = await twoAtOnce('+442079460017', '+442079460017');
    const statuses = traces.map((spans) => spans.find((s) => s.kind === SERVER)!.attributes['cache.status']);
    expect([...statuses].sort()).toEqual(['coalesced', 'miss']);
    const maker = traces[statuses.indexOf('miss')]!;
    const joiner = traces[statuses.indexOf('coalesced')]!;
    expect(joiner.some((s) => s.kind === CLIENT)).toBe(false);
    const wait = joiner.find((s) => s.name === 'lookup wait')!;
    expect(wait).toMatchObject({ kind: INTERNAL, parentSpanId: joiner.find((s) => s.name === 'lookup')!.spanId });
    const makersLookup = maker.find((s) => s.name === 'lookup')!;
    expect(wait.links).toEqual([{ traceId: makersLookup.traceId, spanId: makersLookup.spanId }]);
  });
});
