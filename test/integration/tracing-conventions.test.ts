// The stable HTTP semantic conventions on every span, decoded from the export with OpenTelemetry's own proto files
// (the test receiver reads them with protobufjs), through Node's search door and through the app: the server span's
// url.path, url.scheme, server.address, server.port, network.protocol.version, user_agent.original and, for a method
// outside the known set, http.request.method_original; the upstream client span's url.full with the number written
// REDACTED. And no span, in any name or text attribute, holds a run of a number's digits, wherever the caller put it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReceivedSpan } from '../helpers/otlp-receiver.js';
import { SPAN_KIND, startTracedStack, type TracedStack } from '../helpers/traced-stack.js';

const { SERVER, CLIENT } = SPAN_KIND;

/** A caller's sampled context in a trace of its own. */
function callerContext() {
  const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
  const traceId = hex(16);
  return { traceId, traceparent: `00-${traceId}-${hex(8)}-01` };
}

// The numbers the tests send, and the digits of each as any span could spell them (national or international).
const NUMBERS = ['+442079460041', '+442079460042', '+442079460043', '+442079460044'];
const digitRuns = (e164: string) => {
  const digits = e164.slice(1);
  const runs: string[] = [];
  for (let i = 0; i + 5 <= digits.length; i++) runs.push(digits.slice(i, i + 5));
  return runs;
};

/** Every name and text attribute of `spans`: where a number's digits could be. */
const textsOf = (spans: ReceivedSpan[]) =>
  spans.flatMap((s) => [
    s.name,
    s.traceState,
    s.status.message,
    ...Object.values(s.attributes).filter((v): v is string => typeof v === 'string'),
  ]);

const USER_AGENT = `pbx-dialer/4.2 (${'x'.repeat(400)})`;

describe.each([
  { door: "Node's search door", searchDoor: true },
  { door: 'the app', searchDoor: false },
])('semantic conventions through $door', ({ searchDoor }) => {
  let traced: TracedStack;
  let crm: string;
  const traces: string[] = [];

  beforeAll(async () => {
    traced = await startTracedStack({ gateway: { searchDoor } });
    crm = await traced.stack.login('crm');
  });
  afterAll(() => traced.close());

  const send = async (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
    const caller = callerContext();
    traces.push(caller.traceId);
    const res = await fetch(`${traced.stack.gateway.url}${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${crm}`,
        'user-agent': USER_AGENT,
        traceparent: caller.traceparent,
        ...init.headers,
      },
    });
    await res.arrayBuffer();
    return { res, spans: await traced.spansOf(caller.traceId) };
  };

  it('a miss: the server span and the upstream client span carry the conventions, the number REDACTED', async () => {
    const { res, spans } = await send(`/v2/contacts/search?what=${encodeURIComponent(NUMBERS[0]!)}`);
    expect(res.status).toBe(200);
    const server = spans.find((s) => s.kind === SERVER)!;
    const port = Number(new URL(traced.stack.gateway.url).port);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v2/contacts/search',
      'url.path': '/v2/contacts/search',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': port,
      'network.protocol.version': '1.1',
      'user_agent.original': USER_AGENT.slice(0, 256),
    });
    expect(server.attributes['http.request.method_original']).toBeUndefined();
    const upstream = spans.find((s) => s.kind === CLIENT && s.name === 'GET /v2/contacts/search')!;
    const simulator = new URL(traced.stack.simulator.url);
    expect(upstream.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.full': `${simulator.origin}/v2/contacts/search?what=REDACTED`,
      'server.address': simulator.hostname,
      'server.port': Number(simulator.port),
    });
    const login = spans.find((s) => s.name === 'POST /token/login')!;
    expect(login.attributes['url.full']).toBe(`${simulator.origin}/token/login`);
  });

  it('a method outside the known set: _OTHER, with the method as sent', async () => {
    const { res, spans } = await send('/v2/contacts/search', { method: 'PROPFIND' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const server = spans.find((s) => s.kind === SERVER)!;
    expect(server.name).toMatch(/^HTTP/);
    expect(server.attributes).toMatchObject({
      'http.request.method': '_OTHER',
      'http.request.method_original': 'PROPFIND',
    });
  });

  it('a number in the path, where no route takes it: the segment is REDACTED', async () => {
    const { res, spans } = await send(`/v2/contacts/${encodeURIComponent(NUMBERS[1]!)}/x`);
    expect(res.status).toBe(404);
    expect(spans.find((s) => s.kind === SERVER)!.attributes['url.path']).toBe('/v2/contacts/REDACTED/x');
  });

  it('a number in the admin purge path: the segment is REDACTED', async () => {
    const { spans } = await send(`/admin/cache/${encodeURIComponent(NUMBERS[2]!)}`, { method: 'DELETE' });
    expect(spans.find((s) => s.kind === SERVER)!.attributes['url.path']).toBe('/admin/cache/REDACTED');
  });

  it('a hit and a refusal of a badly written number', async () => {
    await send(`/v2/contacts/search?what=${encodeURIComponent(NUMBERS[0]!)}`);
    const { res } = await send(`/v2/contacts/search?what=${encodeURIComponent(`${NUMBERS[3]!}9999999`)}`);
    expect(res.status).toBe(400);
  });

  it('holds no run of five digits of any number in any span of these traces', async () => {
    const spans = traced.receiver.spans().filter((s) => traces.includes(s.traceId));
    expect(spans.length).toBeGreaterThanOrEqual(9);
    const texts = textsOf(spans);
    for (const number of NUMBERS)
      for (const run of digitRuns(number)) for (const text of texts) expect(text).not.toContain(run);
    // The numbers did reach the gateway and the upstream: the check above has something to find.
    expect(traced.stack.simulator.controls.stats().searchCalls).toBeGreaterThanOrEqual(1);
  });
});
