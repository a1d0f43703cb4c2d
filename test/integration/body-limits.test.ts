// Request bodies are bounded: an oversized body is refused with 413 problem+json as soon as the bound is
// passed, announced (Content-Length) or streamed (chunked), without the gateway holding the body in memory.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';
import { openSocket, rawExchange, rawRequest } from '../helpers/raw-http.js';

const MiB = 1024 * 1024;

interface Upload {
  status: number;
  contentType: string | undefined;
  body: string;
  /** Bytes the client managed to hand to its socket before the answer came (or the server closed). */
  bytesWritten: number;
}

/** Streams up to `total` bytes of form data chunked, with backpressure, and stops at the server's answer. */
function chunkedUpload(base: string, path: string, total: number): Promise<Upload> {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let written = 0;
    let answered = false;
    const req = request(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'transfer-encoding': 'chunked' },
    });
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body, bytesWritten: written });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.write('grant_type=client_credentials&client_id=crm&client_secret=');
    const pump = () => {
      while (!answered && written < total) {
        written += chunk.length;
        if (!req.write(chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

interface Refused {
  /** The answer's head and body as received. */
  received: string;
  /** Bytes of the body the client handed to its socket before the server closed the connection. */
  bytesWritten: number;
  /** Milliseconds from the head to the close. */
  closedAfterMs: number;
}

/**
 * Sends `head` declaring a body, then keeps writing that body (up to `total` bytes, 64 KiB at a time, with
 * backpressure) until the server closes the connection: what a client uploading a gigabyte does.
 */
async function uploadUntilClosed(base: string, head: string, total: number, chunked: boolean): Promise<Refused> {
  const { socket, received, closed } = await openSocket(base);
  const started = performance.now();
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const frame = chunked
    ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
    : chunk;
  let written = 0;
  let open = true;
  void closed.then(() => (open = false));
  socket.write(`${head}\r\n\r\n`);
  while (open && written < total) {
    written += chunk.length;
    if (!socket.write(frame)) await new Promise((r) => socket.once('drain', r).once('close', r));
  }
  const closedAt = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 10_000))]);
  socket.destroy();
  return {
    received: received(),
    bytesWritten: written,
    closedAfterMs: closedAt < 0 ? -1 : performance.now() - started,
  };
}

describe('request body limits', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('refuses a login body announced larger than the bound with 413 before the body is sent', async () => {
    const { socket, received, closed } = await openSocket(stack.gateway.url);
    socket.write(
      'POST /token/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 629145600\r\n\r\ngrant_type=client_credentials',
    );
    const deadline = Date.now() + 3000;
    while (!received().includes('\r\n\r\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    await closed;
    expect(received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(received()).toMatch(/content-type: application\/problem\+json/i);
    expect(received()).toContain('"status":413');
  });

  it('refuses a 64 MiB chunked login body with 413 after reading only a few KiB, and memory does not grow by the body', async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const upload = await chunkedUpload(stack.gateway.url, '/token/login', 64 * MiB);
    const grown = process.memoryUsage().rss - rssBefore;
    expect(upload.status).toBe(413);
    expect(upload.contentType).toBe('application/problem+json');
    expect(JSON.parse(upload.body)).toMatchObject({ status: 413, title: 'Payload too large' });
    // Socket buffers on both sides hold a few MiB at most; the gateway stopped reading long before 64 MiB.
    expect(upload.bytesWritten).toBeLessThan(16 * MiB);
    expect(grown).toBeLessThan(32 * MiB);
  });

  it('still logs in with a normal body', async () => {
    await expect(stack.login('crm')).resolves.toMatch(/^ey/);
  });

  it('refuses a body on the admin routes over the bound with 413', async () => {
    const token = await stack.login('ops');
    const res = await fetch(`${stack.gateway.url}/admin/cache`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(1 * MiB, 'b'),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  /** Sends `head` and then body bytes as fast as the socket takes them, for up to `ms`; what came back, and when. */
  async function pushBody(head: string, ms: number) {
    const { socket, received, closed } = await openSocket(stack.gateway.url);
    socket.write(head);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let written = 0;
    let open = true;
    void closed.then(() => (open = false));
    const deadline = Date.now() + ms;
    while (open && Date.now() < deadline) {
      if (socket.write(chunk)) written += chunk.length;
      else await new Promise((r) => setTimeout(r, 5));
    }
    socket.destroy();
    await closed;
    return { received: received(), written, closedByServer: Date.now() < deadline };
  }

  it('refuses an unauthenticated batch declaring 100 MiB with 413 before authentication, and reads none of it', async () => {
    const sent = await pushBody(
      'POST /v2/contacts/search/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n',
      3000,
    );
    expect(sent.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(sent.received).toMatch(/connection: close/i);
    expect(sent.closedByServer).toBe(true);
    // Socket buffers on both sides hold a few MiB at most; 100 MiB were declared.
    expect(sent.written).toBeLessThan(8 * MiB);
  });

  it('answers an unauthenticated batch within the bound 401 and closes the connection instead of reading the body', async () => {
    const { socket, received, closed } = await openSocket(stack.gateway.url);
    socket.write(
      'POST /v2/contacts/search/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 6000\r\n\r\n{"numbers":[',
    );
    // The rest of the declared body never comes: the gateway must answer and close anyway.
    const closedAfterMs = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 3000))]);
    socket.destroy();
    expect(received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(received()).toMatch(/connection: close/i);
    expect(received()).toMatch(/www-authenticate: /i);
    expect(closedAfterMs).toBeGreaterThan(0);
  });

  it('answers Expect: 100-continue with an oversized Content-Length 413 at once, without 100 Continue', async () => {
    const { socket, received, closed } = await openSocket(stack.gateway.url);
    socket.write(
      'POST /token/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\nContent-Length: 104857600\r\n\r\n',
    );
    const closedAfterMs = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 3000))]);
    socket.destroy();
    expect(received()).not.toMatch(/100 Continue/);
    expect(received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(received()).toMatch(/content-type: application\/problem\+json/i);
    expect(closedAfterMs).toBeGreaterThan(0);
  });

  it('answers Expect: 100-continue with a body within the bound 100 Continue, then the login', async () => {
    const body = 'grant_type=client_credentials&client_id=crm&client_secret=wrong';
    const { socket, received } = await openSocket(stack.gateway.url);
    socket.write(
      `POST /token/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const deadline = Date.now() + 3000;
    while (!received().includes('100 Continue') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(received()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    socket.write(body);
    while (!/\r\n\r\n[\s\S]*HTTP\/1\.1 401[\s\S]*\r\n\r\n/.test(received()) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    socket.destroy();
    expect(received()).toMatch(/HTTP\/1\.1 401 /);
  });

  it('refuses request headers over Node’s 16 KiB with 431', async () => {
    const res = await rawRequest(
      stack.gateway.url,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20 * 1024)}`,
    );
    expect(res.status).toBe(431);
  });

  it.each([
    ['GET /healthz', 'GET /healthz HTTP/1.1', false],
    ['GET a search without a token', 'GET /v2/contacts/search?what=02079460001 HTTP/1.1', false],
    ['HEAD /healthz', 'HEAD /healthz HTTP/1.1', false],
    ['GET /healthz, chunked', 'GET /healthz HTTP/1.1', true],
    ['GET a search without a token, chunked', 'GET /v2/contacts/search?what=02079460001 HTTP/1.1', true],
  ] as const)(
    'refuses %s declaring a gigabyte with 413 and closes the connection before reading it',
    async (_name, requestLine, chunked) => {
      const declared = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${1024 * MiB}`;
      const refused = await uploadUntilClosed(
        stack.gateway.url,
        `${requestLine}\r\nHost: x\r\n${declared}`,
        1024 * MiB,
        chunked,
      );
      expect(refused.received).toMatch(/^HTTP\/1\.1 413 /);
      expect(refused.received).toMatch(/connection: close/i);
      expect(refused.received).toMatch(/x-request-id: /i);
      // Closed at once: what the client wrote was socket buffers, not a body read by the gateway.
      expect(refused.closedAfterMs).toBeGreaterThanOrEqual(0);
      expect(refused.bytesWritten).toBeLessThan(64 * MiB);
    },
  );

  it('refuses a search with a valid token declaring a gigabyte on GET with 413, before its rate is taken', async () => {
    const token = await stack.login();
    const refused = await uploadUntilClosed(
      stack.gateway.url,
      `GET /v2/contacts/search?what=02079460001 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${1024 * MiB}`,
      1024 * MiB,
      false,
    );
    expect(refused.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(refused.received).not.toMatch(/ratelimit:/i);
    expect(refused.bytesWritten).toBeLessThan(64 * MiB);
  });

  it('skips a declared body of a kilobyte on GET and answers as usual', async () => {
    const res = await rawExchange(stack.gateway.url, ['GET /healthz HTTP/1.1', 'Host: x', 'Content-Length: 2'], '{}');
    expect(res.status).toBe(200);
  });
});
