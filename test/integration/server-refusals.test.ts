// The refusals Node and its Hono adapter would answer themselves (a bare status line, or a closed socket), sent as
// written over raw TCP to both listeners: each is the gateway's own, problem+json with a request id, one log line
// and one count, as every other refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { sampleOf } from '../helpers/metric-sample.js';
import { openSocket, parseRawResponse, rawRequest, type OpenSocket } from '../helpers/raw-http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Waits (up to 10 s) until `open` has received `count` answers (a status line each). */
async function answers(open: OpenSocket, count: number): Promise<void> {
  for (let waited = 0; waited < 10_000; waited += 20) {
    if ((open.received().match(/HTTP\/1\.1 \d{3} /g) ?? []).length >= count) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`fewer than ${count} answers: ${JSON.stringify(open.received().slice(0, 200))}`);
}

interface Shape {
  name: string;
  /** The request line and header fields, with `{path}` for the listener's own route. */
  head: string;
  status: number;
  /** The method label of its count. */
  method: string;
  /** Its route label: the listener's route (`path`) or `unmatched`. */
  route: 'path' | 'unmatched';
}

const SHAPES: Shape[] = [
  { name: 'HTTP/1.1 without Host', head: 'GET {path} HTTP/1.1', status: 400, method: 'GET', route: 'path' },
  { name: 'GET *', head: 'GET * HTTP/1.1\r\nHost: x', status: 400, method: 'GET', route: 'unmatched' },
  { name: 'OPTIONS *', head: 'OPTIONS * HTTP/1.1\r\nHost: x', status: 400, method: 'OPTIONS', route: 'unmatched' },
  {
    name: 'an ftp:// target',
    head: 'GET ftp://x{path} HTTP/1.1\r\nHost: x',
    status: 400,
    method: 'GET',
    route: 'unmatched',
  },
  {
    name: 'an absolute-form target with port 99999',
    head: 'GET http://x:99999{path} HTTP/1.1\r\nHost: x',
    status: 400,
    method: 'GET',
    route: 'unmatched',
  },
  {
    name: 'Host with port 99999',
    head: 'GET {path} HTTP/1.1\r\nHost: x:99999',
    status: 400,
    method: 'GET',
    route: 'path',
  },
  {
    name: 'an IPv6 Host a URL parser rewrites',
    head: 'GET {path} HTTP/1.1\r\nHost: [0:0::1]',
    status: 400,
    method: 'GET',
    route: 'path',
  },
  {
    name: 'a backslash in the path',
    head: 'GET /a\\b HTTP/1.1\r\nHost: x',
    status: 400,
    method: 'GET',
    route: 'unmatched',
  },
  {
    name: 'Expect: 200-ok',
    head: 'GET {path} HTTP/1.1\r\nHost: x\r\nExpect: 200-ok',
    status: 417,
    method: 'GET',
    route: 'path',
  },
  { name: 'CONNECT', head: 'CONNECT x:443 HTTP/1.1\r\nHost: x:443', status: 400, method: 'other', route: 'unmatched' },
];

describe.each([
  { listener: 'the API listener', path: '/healthz' },
  { listener: 'the metrics listener', path: '/metrics' },
])('every refusal on $listener', ({ listener, path }) => {
  let stack: Stack;
  let base: string;
  let metricsUrl: string;

  beforeAll(async () => {
    stack = await startStack({ env: { METRICS_PORT: String(await freePort()) } });
    metricsUrl = `http://127.0.0.1:${stack.gateway.metricsServer!.port}`;
    base = listener === 'the API listener' ? stack.gateway.url : metricsUrl;
  });
  afterAll(async () => {
    await stack.close();
  });

  const countOf = async (shape: Shape, status: number): Promise<number> => {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    const route = shape.route === 'path' ? path : 'unmatched';
    const series = `callerid_gateway_http_requests_total{route="${route}",method="${shape.method}",status="${status}"}`;
    return sampleOf(text, series) ?? 0;
  };

  it.each(SHAPES)('answers $name with problem+json, a request id, a log line and a count', async (shape) => {
    const before = await countOf(shape, shape.status);
    const res = await rawRequest(base, shape.head.replace('{path}', path));

    expect(res.status).toBe(shape.status);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const body = JSON.parse(res.body) as { status: number; requestId: string };
    expect(body).toMatchObject({ status: shape.status, requestId: expect.any(String) });
    expect(res.headers['x-request-id']).toBe(body.requestId);
    const lines = stack.logs.filter((l) => l.fields.requestId === body.requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toMatchObject({ event: 'request', status: shape.status });
    expect(await countOf(shape, shape.status)).toBe(before + 1);
  });

  it('answers a malformed request after a kept-alive one the same way, and records it', async () => {
    const open = await openSocket(base);
    open.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await answers(open, 1);
    const second = open.received().length;
    open.socket.write('GET / HTTP/1.1\r\nHost x\r\n\r\n');
    await open.closed;
    const res = parseRawResponse(open.received().slice(second))!;
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    const { requestId } = JSON.parse(res.body) as { requestId: string };
    expect(stack.logs.filter((l) => l.fields.requestId === requestId)).toHaveLength(1);
  });

  it('records nothing for a kept-alive connection the client resets between requests', async () => {
    const open = await openSocket(base);
    open.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await answers(open, 1);
    const lines = stack.logs.length;
    open.socket.resetAndDestroy();
    // Long enough for the reset to reach the server; anything it recorded would be there by then.
    await new Promise((r) => setTimeout(r, 300));
    expect(stack.logs.slice(lines)).toEqual([]);
  });

  it('still answers a well-formed request', async () => {
    expect((await rawRequest(base, `GET ${path} HTTP/1.1\r\nHost: x`)).status).toBe(200);
  });
});
