// The tracer and the HTTP spans: a caller's trace continued or a new one started, children under the gateway's
// spans and under a caller's span in another isolate, unsampled traces still propagated, and tracing off costing no
// id and recording nothing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  endServerSpan,
  endUpstreamSpan,
  remoteSpan,
  startServerSpan as startServerSpanOf,
  startUpstreamSpan,
  traceHeaders,
  upstreamCall,
  type ArrivedRequest,
  type IncomingRequest,
} from './http-spans.js';
import type { FinishedSpan, SpanSink } from './span.js';
import { RandomIds } from './trace-ids.js';
import { callerSampleBudget } from './sampler.js';
import { createTracer, disabledTracer, type Tracer } from './tracer.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

function memorySink(): SpanSink & { spans: FinishedSpan[] } {
  let clock = 1_700_000_000_000;
  const spans: FinishedSpan[] = [];
  return { spans, now: () => (clock += 1.5), end: (span) => spans.push(span) };
}

type Request = IncomingRequest & ArrivedRequest;

const request = (overrides: Partial<Request> = {}): Request => ({
  method: 'GET',
  route: '/v2/contacts/search',
  traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
  tracestate: 'rojo=1',
  scheme: 'https',
  path: '/v2/contacts/search',
  serverAddress: 'callerid.example.com',
  serverPort: 443,
  protocolVersion: '1.1',
  userAgent: 'pbx/1.0',
  clientAddress: '192.0.2.7',
  ...overrides,
});

/** A server span of `r`, its arrival read when the span asks for it. */
const startServerSpan = (tracer: Tracer, r: Request) => startServerSpanOf(tracer, r, () => r);

/** An upstream call whose details do not matter to the test. */
const CALL = upstreamCall('GET', 'https://u', '/t');

const ALWAYS = { name: 'parentbased_always_on', ratio: 1, callerPerSecond: 100 } as const;

afterEach(() => vi.restoreAllMocks());

describe('tracer', () => {
  it("continues a caller's sampled trace: the server span is the caller's child, the client span the server's", () => {
    const sink = memorySink();
    const tracer = createTracer(ALWAYS, sink);
    const server = startServerSpan(tracer, request());
    const upstream = startUpstreamSpan(
      tracer,
      server,
      upstreamCall('GET', 'https://upstream.example.net', '/v2/contacts/search', ['what']),
    );
    expect(traceHeaders(upstream)).toEqual({
      traceparent: `00-${TRACE}-${upstream.context!.spanId}-01`,
      tracestate: 'rojo=1',
    });
    endUpstreamSpan(upstream, { status: 200 });
    endServerSpan(server, { status: 200, cacheStatus: 'miss', clientId: 'pbx-1' });
    const [client, serverSpan] = sink.spans;
    expect(serverSpan).toMatchObject({
      name: 'GET /v2/contacts/search',
      kind: 'server',
      parentSpanId: CALLER_SPAN,
      context: { traceId: TRACE, sampled: true, traceState: 'rojo=1' },
      attributes: {
        'http.request.method': 'GET',
        'http.route': '/v2/contacts/search',
        'url.scheme': 'https',
        'server.address': 'callerid.example.com',
        'client.address': '192.0.2.7',
        'http.response.status_code': 200,
        'cache.status': 'miss',
        'gateway.client.id': 'pbx-1',
      },
      status: { code: 'unset' },
    });
    expect(client).toMatchObject({
      name: 'GET /v2/contacts/search',
      kind: 'client',
      parentSpanId: serverSpan!.context.spanId,
      context: { traceId: TRACE, spanId: upstream.context!.spanId },
      attributes: { 'server.address': 'upstream.example.net', 'server.port': 443, 'http.response.status_code': 200 },
    });
    expect(client!.endMs).toBeGreaterThan(client!.startMs);
    expect(new Set([CALLER_SPAN, serverSpan!.context.spanId, client!.context.spanId]).size).toBe(3);
  });

  it("records nothing for a caller's unsampled trace and still propagates it, unsampled", () => {
    const sink = memorySink();
    const tracer = createTracer(ALWAYS, sink);
    const server = startServerSpan(tracer, request({ traceparent: `00-${TRACE}-${CALLER_SPAN}-00` }));
    const upstream = startUpstreamSpan(tracer, server, CALL);
    endUpstreamSpan(upstream, { status: 200 });
    endServerSpan(server, { status: 200 });
    expect(sink.spans).toEqual([]);
    expect(traceHeaders(upstream).traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    expect(traceHeaders(upstream).traceparent).not.toContain(CALLER_SPAN);
  });

  it('starts a new trace for an invalid traceparent, dropping its tracestate', () => {
    const sink = memorySink();
    const server = startServerSpan(
      createTracer(ALWAYS, sink),
      request({ traceparent: `00-${TRACE}-${CALLER_SPAN}-01-x` }),
    );
    server.end();
    expect(sink.spans[0]!.context.traceId).not.toBe(TRACE);
    expect(sink.spans[0]!.context.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(sink.spans[0]!.parentSpanId).toBeUndefined();
    expect(sink.spans[0]!.context.traceState).toBeUndefined();
  });

  it('names unknown methods and unmatched routes as the semantic conventions do; a 5xx is an error', () => {
    const sink = memorySink();
    const tracer = createTracer(ALWAYS, sink);
    endServerSpan(startServerSpan(tracer, request({ method: 'BREW', route: undefined })), { status: 404 });
    endServerSpan(startServerSpan(tracer, request({ method: 'GET', route: undefined })), { status: 503 });
    const [brew, get] = sink.spans;
    expect(brew).toMatchObject({
      name: 'HTTP',
      attributes: { 'http.request.method': '_OTHER' },
      status: { code: 'unset' },
    });
    expect(brew!.attributes['http.route']).toBeUndefined();
    expect(get).toMatchObject({ name: 'GET', attributes: { 'error.type': '503' }, status: { code: 'error' } });
  });

  it('marks a failed upstream call as an error by its status or what failed', () => {
    const sink = memorySink();
    const tracer = createTracer(ALWAYS, sink);
    const call = upstreamCall('POST', 'https://u', '/oauth/token');
    endUpstreamSpan(startUpstreamSpan(tracer, undefined, call), { status: 401 });
    endUpstreamSpan(startUpstreamSpan(tracer, undefined, call), { errorType: 'timeout' });
    expect(sink.spans.map((s) => [s.attributes['error.type'], s.status.code])).toEqual([
      ['401', 'error'],
      ['timeout', 'error'],
    ]);
    // Without a parent each is the root of a trace of its own.
    expect(sink.spans[0]!.context.traceId).not.toBe(sink.spans[1]!.context.traceId);
  });

  it('ends a span once, keeps nothing set after its end, and carries links', () => {
    const sink = memorySink();
    const tracer = createTracer(ALWAYS, sink);
    const fill = tracer.startSpan('lookup fill', undefined);
    const wait = tracer.startSpan('lookup wait', fill, { attributes: { 'lookup.tier': 'redis' } });
    wait.addLink({ context: fill.context!, attributes: { reason: 'coalesced' } });
    wait.end();
    wait.setAttribute('late', true);
    wait.end();
    expect(sink.spans).toHaveLength(1);
    expect(sink.spans[0]).toMatchObject({
      kind: 'internal',
      attributes: { 'lookup.tier': 'redis' },
      links: [{ context: fill.context, attributes: { reason: 'coalesced' } }],
    });
    expect(sink.spans[0]!.attributes['late']).toBeUndefined();
  });
});

describe("a caller's span in another isolate (a Durable Object's caller)", () => {
  it('makes a span under it its child, recorded as its flag says, in its trace and with its tracestate', () => {
    const sink = memorySink();
    const tracer = createTracer({ name: 'parentbased_always_off', ratio: 1, callerPerSecond: 100 }, sink);
    const caller = remoteSpan({ traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'rojo=1' });
    const login = startUpstreamSpan(tracer, caller, CALL);
    expect(login.recording).toBe(true);
    endUpstreamSpan(login, { status: 200 });
    expect(sink.spans).toMatchObject([
      { kind: 'client', parentSpanId: CALLER_SPAN, context: { traceId: TRACE, sampled: true, traceState: 'rojo=1' } },
    ]);
    expect(traceHeaders(login)).toEqual({
      traceparent: `00-${TRACE}-${login.context!.spanId}-01`,
      tracestate: 'rojo=1',
    });

    const unsampled = startUpstreamSpan(tracer, remoteSpan({ traceparent: `00-${TRACE}-${CALLER_SPAN}-00` }), CALL);
    expect(unsampled.recording).toBe(false);
    expect(traceHeaders(unsampled).traceparent).toMatch(new RegExp(`^00-${TRACE}-(?!${CALLER_SPAN})[0-9a-f]{16}-00$`));
    expect(sink.spans).toHaveLength(1);
  });

  it('is none for an absent or invalid context; tracing off passes a valid one on as it came', () => {
    expect(remoteSpan(undefined)).toBeUndefined();
    expect(remoteSpan({})).toBeUndefined();
    expect(remoteSpan({ traceparent: `00-${TRACE}-${'0'.repeat(16)}-01` })).toBeUndefined();
    const caller = remoteSpan({ traceparent: `00-${TRACE}-${CALLER_SPAN}-01` });
    expect(traceHeaders(startUpstreamSpan(disabledTracer, caller, CALL))).toEqual({
      traceparent: `00-${TRACE}-${CALLER_SPAN}-01`,
    });
  });
});

describe('ids', () => {
  it('draws no randomness until the first id, then cuts well-formed, distinct ids from a refilled pool', () => {
    const draw = vi.spyOn(crypto, 'getRandomValues');
    const ids = new RandomIds();
    expect(draw).not.toHaveBeenCalled();
    const traceIds = Array.from({ length: 1_000 }, () => ids.traceId());
    const spanIds = Array.from({ length: 1_000 }, () => ids.spanId());
    expect(traceIds.every((id) => /^[0-9a-f]{32}$/.test(id) && !/^0+$/.test(id))).toBe(true);
    expect(spanIds.every((id) => /^[0-9a-f]{16}$/.test(id) && !/^0+$/.test(id))).toBe(true);
    expect(new Set([...traceIds, ...spanIds]).size).toBe(2_000);
    // 24,000 bytes from a pool of 16,384: two fills, not one call per id.
    expect(draw).toHaveBeenCalledTimes(2);
  });
});

describe('tracing off', () => {
  it("draws no id and records nothing, and passes a caller's valid context through as it came", () => {
    const draw = vi.spyOn(crypto, 'getRandomValues');
    const none = startServerSpan(disabledTracer, request({ traceparent: undefined, tracestate: undefined }));
    expect(none.context).toBeUndefined();
    expect(traceHeaders(disabledTracer.startSpan('x', none))).toEqual({});
    const caller = startServerSpan(disabledTracer, request());
    const upstream = startUpstreamSpan(disabledTracer, caller, CALL);
    endUpstreamSpan(upstream, { status: 200 });
    endServerSpan(caller, { status: 200 });
    expect(traceHeaders(upstream)).toEqual({ traceparent: `00-${TRACE}-${CALLER_SPAN}-01`, tracestate: 'rojo=1' });
    expect(startServerSpan(disabledTracer, request({ traceparent: 'garbage' })).context).toBeUndefined();
    expect(draw).not.toHaveBeenCalled();
  });
});

describe("tracing off: the caller's fields go on byte for byte, or neither", () => {
  const forwarded = (traceparent: string | undefined, tracestate?: string) =>
    traceHeaders(
      startUpstreamSpan(disabledTracer, startServerSpan(disabledTracer, request({ traceparent, tracestate })), CALL),
    );

  it.each([
    ['flags ff', `00-${TRACE}-${CALLER_SPAN}-ff`, 'rojo=1'],
    ['flags 02', `00-${TRACE}-${CALLER_SPAN}-02`, 'rojo=1'],
    ['a key twice', `00-${TRACE}-${CALLER_SPAN}-01`, 'foo=1,foo=1'],
    ['33 members', `00-${TRACE}-${CALLER_SPAN}-01`, Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
    ['optional whitespace and empty members', `00-${TRACE}-${CALLER_SPAN}-01`, ' a=1 ,, b=2'],
    ['a later version with more after the flags', `cc-${TRACE}-${CALLER_SPAN}-01-future`, 'rojo=1'],
  ])('%s: as it came', (_what, traceparent, tracestate) => {
    expect(forwarded(traceparent, tracestate)).toEqual({ traceparent, tracestate });
  });

  it('an invalid traceparent: neither field; a tracestate past 512 characters: cut to whole members, as on', () => {
    expect(forwarded(`00-${TRACE}-${'0'.repeat(16)}-01`, 'rojo=1')).toEqual({});
    expect(forwarded(`cc-${TRACE}-${CALLER_SPAN}-01-${'x'.repeat(500)}`, 'rojo=1')).toEqual({});
    const traceparent = `00-${TRACE}-${CALLER_SPAN}-01`;
    expect(forwarded(traceparent, `a=${'x'.repeat(511)}`)).toEqual({ traceparent });
    expect(forwarded(traceparent, undefined)).toEqual({ traceparent });
    const long = `rojo=1,${Array.from({ length: 4 }, (_, i) => `k${i}=${'v'.repeat(200)}`).join(',')}`;
    expect(forwarded(traceparent, long)).toEqual({ traceparent, tracestate: long.split(',').slice(0, 3).join(',') });
  });
});

describe('tracing on: the random flag (Trace Context Level 2)', () => {
  it.each([
    ['02', '02'],
    ['03', '03'],
    ['01', '01'],
    ['ff', '03'],
  ])("a caller's flags %s go on as %s: the random bit kept, no unknown bit", (incoming, outgoing) => {
    const tracer = createTracer(ALWAYS, memorySink());
    const server = startServerSpan(tracer, request({ traceparent: `00-${TRACE}-${CALLER_SPAN}-${incoming}` }));
    const upstream = startUpstreamSpan(tracer, server, CALL);
    expect(traceHeaders(upstream).traceparent).toBe(`00-${TRACE}-${upstream.context!.spanId}-${outgoing}`);
  });

  it('sets it on every trace the gateway starts, recorded or not', () => {
    const recorded = startServerSpan(createTracer(ALWAYS, memorySink()), request({ traceparent: undefined }));
    expect(traceHeaders(recorded).traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-03$/);
    const off = { name: 'always_off', ratio: 1, callerPerSecond: 100 } as const;
    const unrecorded = startServerSpan(createTracer(off, memorySink()), request({ traceparent: 'garbage' }));
    expect(traceHeaders(unrecorded).traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-02$/);
  });
});

describe('where a request arrived', () => {
  it('is read for a recorded server span and never for one the sampler leaves out', () => {
    const arrived = vi.fn(() => request());
    const off = { name: 'parentbased_always_off', ratio: 1, callerPerSecond: 100 } as const;
    const left = startServerSpanOf(createTracer(off, memorySink()), request({ traceparent: undefined }), arrived);
    expect(left.recording).toBe(false);
    expect(arrived).not.toHaveBeenCalled();
    const sink = memorySink();
    startServerSpanOf(createTracer(ALWAYS, sink), request(), arrived).end();
    expect(arrived).toHaveBeenCalledTimes(1);
    expect(sink.spans[0]!.attributes['client.address']).toBe('192.0.2.7');
  });
});

describe("what callers' contexts make the tracer record", () => {
  /** A sink whose clock stands still unless the test moves it. */
  function clockedSink() {
    const sink = { spans: [] as FinishedSpan[], clock: 1_700_000_000_000, now: () => sink.clock };
    return Object.assign(sink, { end: (span: FinishedSpan) => void sink.spans.push(span) });
  }
  const callerTrace = (i: number, randomPart = '00000000000001') =>
    `00-${i.toString(16).padStart(18, '0')}${randomPart}-${CALLER_SPAN}-01`;

  it('records sampled callers within the budget; past it the sampler decides, and the caller sees it unsampled', () => {
    const sink = clockedSink();
    const budget = callerSampleBudget(2);
    const tracer = createTracer({ name: 'parentbased_always_off', ratio: 1, callerPerSecond: 2 }, sink, budget);
    const spans = [1, 2, 3, 4, 5].map((i) => tracer.startServerSpan('GET', callerTrace(i), undefined));
    expect(spans.map((s) => s.recording)).toEqual([true, true, false, false, false]);
    expect(budget.capped).toBe(3);
    expect(traceHeaders(spans[4]!).traceparent).toMatch(/-00$/);
    sink.clock += 1_000;
    expect(tracer.startServerSpan('GET', callerTrace(6), undefined).recording).toBe(true);
  });

  it('counts a trace id chosen to fall in the ratio against the budget too, and past it draws an id of its own', () => {
    const sink = clockedSink();
    const budget = callerSampleBudget(1);
    const sampler = { name: 'parentbased_traceidratio', ratio: 1e-9, callerPerSecond: 1 } as const;
    const tracer = createTracer(sampler, sink, budget);
    const chosen = (i: number) => callerTrace(i, 'ffffffffffffff').replace(/-01$/, '-00');
    // An unsampled caller is never recorded, whatever its id.
    expect(tracer.startServerSpan('GET', chosen(1), undefined).recording).toBe(false);
    const untrusted = createTracer({ ...sampler, name: 'traceidratio' }, sink, budget);
    expect([2, 3, 4].map((i) => untrusted.startServerSpan('GET', chosen(i), undefined).recording)).toEqual([
      true,
      false,
      false,
    ]);
    expect(budget.capped).toBe(2);
  });

  it('takes nothing from the budget where every trace is recorded anyway, nor for the gateway’s own traces', () => {
    const sink = clockedSink();
    const budget = callerSampleBudget(0);
    const tracer = createTracer(ALWAYS, sink, budget);
    expect(tracer.startServerSpan('GET', callerTrace(1), undefined).recording).toBe(true);
    expect(tracer.startServerSpan('GET', undefined, undefined).recording).toBe(true);
    const ratio = createTracer({ name: 'parentbased_traceidratio', ratio: 0.5, callerPerSecond: 0 }, sink, budget);
    for (let i = 0; i < 50; i++) ratio.startServerSpan('GET', undefined, undefined);
    expect(budget.capped).toBe(0);
  });
});
