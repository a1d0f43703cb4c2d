// A caller's trace context on its way to the upstream over real sockets, as the simulator receives it. Tracing on
// (W3C Trace Context Level 1, and Level 2's random flag): flags 02 and 03 keep their random bit, a trace the gateway
// starts has it set. Tracing off: `traceparent` and `tracestate` go on byte for byte, whatever their flags or
// members, or neither when the `traceparent` is invalid. Through Node's search door and through the app.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
const DOORS = [
  { door: "Node's search door", searchDoor: true },
  { door: 'the app', searchDoor: false },
];

/** One miss of a number not asked before, with `headers`; what the upstream received of the trace context. */
async function missWith(stack: Stack, token: string, n: number, headers: Record<string, string>) {
  const before = stack.simulator.controls.stats();
  const res = await stack.search(`+4420794600${String(50 + n)}`, token, { headers });
  expect(res.status).toBe(200);
  await res.text();
  const after = stack.simulator.controls.stats();
  return {
    traceparents: after.traceparentsSeen.slice(before.traceparentsSeen.length),
    tracestates: after.tracestatesSeen.slice(before.tracestatesSeen.length),
  };
}

describe.each(DOORS)('tracing on, through $door', ({ searchDoor }) => {
  let stack: Stack;
  let token: string;
  beforeAll(async () => {
    // A collector that is not there: what matters here is what the upstream receives.
    stack = await startStack({
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', OTEL_EXPORTER_OTLP_TIMEOUT: '100' },
      gateway: { searchDoor },
    });
    token = await stack.login('crm');
  });
  afterAll(() => stack.close());

  it.each([
    ['02', '02', 1],
    ['03', '03', 2],
  ])('flags %s go on as %s: the random bit kept', async (incoming, outgoing, n) => {
    const traceId = hex(16);
    const caller = hex(8);
    const seen = await missWith(stack, token, n, { traceparent: `00-${traceId}-${caller}-${incoming}` });
    expect(seen.traceparents).toHaveLength(1);
    expect(seen.traceparents[0]).toMatch(new RegExp(`^00-${traceId}-(?!${caller})[0-9a-f]{16}-${outgoing}$`));
  });

  it('a trace the gateway starts has the random flag set', async () => {
    const seen = await missWith(stack, token, 3, {});
    expect(seen.traceparents).toHaveLength(1);
    expect(seen.traceparents[0]).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-03$/);
  });
});

describe.each(DOORS)('tracing off (OTEL_SDK_DISABLED=true), through $door', ({ searchDoor }) => {
  let stack: Stack;
  let token: string;
  beforeAll(async () => {
    stack = await startStack({
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces', OTEL_SDK_DISABLED: 'true' },
      gateway: { searchDoor },
    });
    token = await stack.login('crm');
  });
  afterAll(() => stack.close());

  it.each([
    ['flags ff', 'ff', 'rojo=00f067aa0ba902b7', 4],
    ['a key twice', '01', 'foo=1,foo=1', 5],
    ['33 members', '00', Array.from({ length: 33 }, (_, i) => `m${i}=${i}`).join(','), 6],
  ])('%s: traceparent and tracestate as they came', async (_what, flags, tracestate, n) => {
    const traceparent = `00-${hex(16)}-${hex(8)}-${flags}`;
    const seen = await missWith(stack, token, n, { traceparent, tracestate });
    expect(seen.traceparents).toEqual([traceparent]);
    expect(seen.tracestates).toEqual([tracestate]);
  });

  it('an invalid traceparent: neither goes on', async () => {
    const seen = await missWith(stack, token, 7, {
      traceparent: `00-${hex(16)}-${'0'.repeat(16)}-01`,
      tracestate: 'a=1',
    });
    expect(seen).toEqual({ traceparents: [], tracestates: [] });
  });
});
