// What a caller's trace context can make the gateway record and send on, over real sockets: sampled `traceparent`s
// start recording only within TRACING_CALLER_SAMPLED_PER_SECOND, and a long `tracestate` reaches neither a span nor
// the upstream simulator past 512 characters, with tracing on (through Node's search door and the app) and off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleOf } from '../helpers/metric-sample.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { SPAN_KIND, startTracedStack, type TracedStack } from '../helpers/traced-stack.js';

const hex = (bytes: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');

/** 32 members, 8,149 characters: what a caller sent to be copied into every span and on to the paid upstream. */
const MEMBERS = Array.from({ length: 32 }, (_, i) => {
  const key = `k${String(i).padStart(2, '0')}`;
  return `${key}=${'v'.repeat((i < 31 ? 254 : 244) - key.length - 1)}`;
});
const LONG_TRACESTATE = MEMBERS.join(',');
/** What W3C Trace Context's truncation keeps of it: whole members from the front, 509 characters. */
const KEPT = MEMBERS.slice(0, 2).join(',');

describe('caller-sampled traces at a ratio of 0.01', () => {
  const CAP = 10;
  let traced: TracedStack;
  beforeAll(async () => {
    traced = await startTracedStack({
      env: {
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
        TRACING_CALLER_SAMPLED_PER_SECOND: String(CAP),
      },
    });
  });
  afterAll(() => traced.close());

  it('200 anonymous 404s with a sampled traceparent export at most the cap, and the rest are counted', async () => {
    // Trace ids whose random part is 1: far outside the ratio, so only the caller's flag could record them.
    const traceIds = Array.from({ length: 200 }, () => `${hex(9)}00000000000001`);
    const started = performance.now();
    for (let i = 0; i < traceIds.length; i += 20) {
      const answers = await Promise.all(
        traceIds.slice(i, i + 20).map((traceId) =>
          fetch(`${traced.stack.gateway.url}/no-such-route`, {
            headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
          }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(404);
        await answer.body?.cancel();
      }
    }
    const seconds = (performance.now() - started) / 1000;
    await traced.stack.gateway.services.tracing.flush();
    const ours = new Set(traceIds);
    const recorded = traced.receiver.spans().filter((s) => s.kind === SPAN_KIND.SERVER && ours.has(s.traceId));
    // The budget: CAP at once and CAP a second after; past it the ratio draws, 0.01 of at most 200 (8 is far out).
    const bound = CAP + CAP * seconds + 8;
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.length).toBeLessThanOrEqual(bound);

    const metrics = await (await fetch(`${traced.stack.gateway.url}/metrics`)).text();
    const capped = sampleOf(metrics, 'callerid_gateway_trace_caller_sampled_capped_total')!;
    expect(capped).toBeGreaterThanOrEqual(200 - (CAP + CAP * seconds));
    expect(capped).toBeLessThan(200);
  });
});

describe.each([
  { door: "Node's search door", searchDoor: true },
  { door: 'the app', searchDoor: false },
])('an 8,149-character tracestate through $door', ({ searchDoor }) => {
  let traced: TracedStack;
  beforeAll(async () => {
    traced = await startTracedStack({ gateway: { searchDoor } });
  });
  afterAll(() => traced.close());

  it('reaches neither a span nor the upstream past 512 characters: whole members are dropped from the end', async () => {
    const traceId = hex(16);
    const token = await traced.stack.login('crm');
    const what = searchDoor ? '+442079460031' : '+442079460032';
    const res = await traced.stack.search(what, token, {
      headers: { traceparent: `00-${traceId}-${hex(8)}-01`, tracestate: LONG_TRACESTATE },
    });
    expect(res.status).toBe(200);
    await res.text();
    const spans = await traced.spansOf(traceId);
    expect(spans.length).toBeGreaterThanOrEqual(3);
    for (const span of spans) expect(span.traceState).toBe(KEPT);
    const seen = traced.stack.simulator.controls.stats().tracestatesSeen;
    expect(seen.length).toBeGreaterThan(0);
    for (const tracestate of seen) expect(tracestate.length).toBeLessThanOrEqual(512);
    expect(seen.at(-1)).toBe(KEPT);
  });
});

describe('an 8,149-character tracestate with tracing off', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('goes on to the upstream bounded the same way, the traceparent as it came', async () => {
    const traceparent = `00-${hex(16)}-${hex(8)}-01`;
    const res = await stack.search('+442079460033', await stack.login('crm'), {
      headers: { traceparent, tracestate: LONG_TRACESTATE },
    });
    expect(res.status).toBe(200);
    await res.text();
    const stats = stack.simulator.controls.stats();
    expect(stats.traceparentsSeen).toEqual([traceparent]);
    expect(stats.tracestatesSeen).toEqual([KEPT]);
  });
});
