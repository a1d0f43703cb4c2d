// A client that closes its connection before its body is whole, on every route that reads a body, over real sockets:
// one request line with status 499, no stack and no `unhandled_error`, counted under 499 and never as a 5xx, and the
// gateway goes on serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleOf } from '../helpers/metric-sample.js';
import { openSocket, type OpenSocket } from '../helpers/raw-http.js';
import { startStack, type CapturedLog, type Stack } from '../helpers/stack.js';

const FORM = 'application/x-www-form-urlencoded';

/** Each route that reads a body, its content type, and whether it needs an (admin) token before it reads. */
const ROUTES: { route: string; type: string; token: boolean }[] = [
  { route: '/token/login', type: FORM, token: false },
  { route: '/oauth2/token', type: FORM, token: false },
  { route: '/oauth2/revoke', type: FORM, token: false },
  { route: '/oauth2/introspect', type: FORM, token: false },
  { route: '/v2/contacts/search/batch', type: 'text/plain', token: true },
  { route: '/admin/tokens/revoke-client', type: 'application/json', token: true },
];

/** Waits (up to 10 s) for the request line of `route` with `status` not yet in `seen`. */
async function requestLine(stack: Stack, route: string, status: number, seen: Set<CapturedLog>): Promise<CapturedLog> {
  for (let waited = 0; waited < 10_000; waited += 25) {
    const line = stack.logs.find(
      (l) => !seen.has(l) && l.fields.event === 'request' && l.fields.route === route && l.fields.status === status,
    );
    if (line !== undefined) {
      seen.add(line);
      return line;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no request line for ${route} with status ${status}`);
}

/** The count of answers of `route` (POST) with `status`, as /metrics shows it; 0 for a series not there. */
async function countOf(stack: Stack, route: string, status: number): Promise<number> {
  const text = await (await fetch(`${stack.gateway.url}/metrics`)).text();
  return sampleOf(text, `callerid_gateway_http_requests_total{route="${route}",method="POST",status="${status}"}`) ?? 0;
}

/** Sends the head of a POST declaring 1000 bytes, then 10 of them; the gateway has begun to read it once this returns. */
async function startUpload(stack: Stack, route: string, type: string, token: string | undefined): Promise<OpenSocket> {
  const open = await openSocket(stack.gateway.url);
  const auth = token === undefined ? '' : `Authorization: Bearer ${token}\r\n`;
  open.socket.write(
    `POST ${route} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: ${type}\r\nContent-Length: 1000\r\n\r\n`,
  );
  open.socket.write('0123456789');
  // Time for the head to be read and the route to start reading the body; an abort before that is one too.
  await new Promise((r) => setTimeout(r, 100));
  return open;
}

describe('a body cut short', () => {
  let stack: Stack;
  let adminToken: string;
  const seen = new Set<CapturedLog>();

  beforeAll(async () => {
    stack = await startStack();
    adminToken = await stack.login('ops');
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each(ROUTES)('is the client’s abort on $route: one 499 line, no stack, counted under 499', async (r) => {
    const before = await countOf(stack, r.route, 499);
    const open = await startUpload(stack, r.route, r.type, r.token ? adminToken : undefined);
    open.socket.destroy();

    const line = await requestLine(stack, r.route, 499, seen);
    expect(line.level).toBe('info');
    expect(JSON.stringify(line.fields)).not.toContain('stack');
    const ofRequest = stack.logs.filter((l) => l.fields.requestId === line.fields.requestId);
    expect(ofRequest).toHaveLength(1);
    expect(await countOf(stack, r.route, 499)).toBe(before + 1);
    expect(await countOf(stack, r.route, 500)).toBe(0);
  });

  it('is the client’s abort when the client ends its side short and waits: nothing answered, 499 recorded', async () => {
    const open = await startUpload(stack, '/token/login', FORM, undefined);
    open.socket.end();
    await open.closed;
    expect(open.received()).toBe('');
    await requestLine(stack, '/token/login', 499, seen);
  });

  it('is the client’s abort for a chunked body cut mid-chunk', async () => {
    const open = await openSocket(stack.gateway.url);
    open.socket.write(
      `POST /v2/contacts/search/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminToken}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n+4420`,
    );
    await new Promise((r) => setTimeout(r, 100));
    open.socket.destroy();
    await requestLine(stack, '/v2/contacts/search/batch', 499, seen);
  });

  it('is the client’s abort when the head itself is cut short: nothing answered, 499 recorded as unmatched', async () => {
    const open = await openSocket(stack.gateway.url);
    open.socket.end('POST /token/login HTTP/1.1\r\nHost: x\r\nConte');
    await open.closed;
    expect(open.received()).toBe('');
    expect((await requestLine(stack, 'unmatched', 499, seen)).fields.method).toBe('OTHER');
  });

  it('logs no unhandled error and no 5xx for any of them, and goes on serving', async () => {
    expect(stack.logs.filter((l) => l.fields.event === 'unhandled_error')).toEqual([]);
    expect(stack.logs.filter((l) => l.fields.event === 'request' && Number(l.fields.status) >= 500)).toEqual([]);
    expect((await fetch(`${stack.gateway.url}/healthz`)).status).toBe(200);
    expect(await stack.login()).toEqual(expect.any(String));
  });
});
