// A client that trickles its headers or body, or opens more connections than allowed, does not hold the
// Node server: HTTP_HEADERS_TIMEOUT_SECONDS, HTTP_REQUEST_TIMEOUT_SECONDS and HTTP_MAX_CONNECTIONS, over raw TCP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket, rawRequest, type OpenSocket } from '../helpers/raw-http.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Writes one byte of `text` every `everyMs` until the server closes the connection. */
function trickle(open: OpenSocket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (open.socket.destroyed || i >= text.length) {
      clearInterval(timer);
      return;
    }
    open.socket.write(text[i++]!);
  }, everyMs);
  void open.closed.then(() => clearInterval(timer));
}

/** The close time, or Infinity when the connection is still open after `ms`. */
async function closedWithin(open: OpenSocket, ms: number): Promise<number> {
  const closedAt = await Promise.race([open.closed, new Promise<number>((r) => setTimeout(() => r(Infinity), ms))]);
  if (closedAt === Infinity) open.socket.destroy();
  return closedAt;
}

describe('slow clients', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '2' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('closes a login whose body trickles in 1 byte every 300 ms with 408 within the request timeout', async () => {
    const open = await openSocket(stack.gateway.url);
    open.socket.write(
      'POST /token/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
    );
    trickle(open, 'grant_type=client_credentials&client_id=crm&client_secret='.padEnd(1000, 'x'), 300);
    const closedAt = await closedWithin(open, 8000);
    // The bound (2 s) plus Node's check interval (at most 1 s here) plus scheduling slack; Node's default is 300 s.
    expect(closedAt).toBeLessThan(5000);
    expect(open.received()).toMatch(/^HTTP\/1\.1 408 /);
    // The app was reading the body: it records the request with the status the client got, once, and no error.
    await expect
      .poll(() => stack.logs.filter((l) => l.fields.route === '/token/login').map((l) => l.fields.status))
      .toEqual([408]);
    expect(stack.logs.filter((l) => l.fields.event === 'unhandled_error')).toEqual([]);
  });

  it('closes a connection whose headers trickle in within the headers timeout', async () => {
    const open = await openSocket(stack.gateway.url);
    open.socket.write('GET /healthz HTTP/1.1\r\n');
    trickle(open, 'X-Slow: '.padEnd(200, 'y'), 200);
    const closedAt = await closedWithin(open, 8000);
    expect(closedAt).toBeLessThan(4000);
  });

  it('still answers a prompt request', async () => {
    expect((await rawRequest(stack.gateway.url, 'GET /healthz HTTP/1.1\r\nHost: x')).status).toBe(200);
  });
});

describe('connection cap', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { HTTP_MAX_CONNECTIONS: '3' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('drops connections beyond HTTP_MAX_CONNECTIONS and accepts again once one closes', async () => {
    const held = await Promise.all([0, 1, 2].map(() => openSocket(stack.gateway.url)));
    // Let the server accept all three before the fourth arrives.
    await new Promise((r) => setTimeout(r, 100));
    const extra = await openSocket(stack.gateway.url);
    expect(await closedWithin(extra, 2000)).toBeLessThan(2000);
    held[0]!.socket.destroy();
    await held[0]!.closed;
    await new Promise((r) => setTimeout(r, 100));
    expect((await rawRequest(stack.gateway.url, 'GET /healthz HTTP/1.1\r\nHost: x')).status).toBe(200);
    for (const open of held) open.socket.destroy();
  });
});
