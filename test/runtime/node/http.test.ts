// The Node upstream transport over real sockets: what it reads, and every way an exchange can fail (a slow answer,
// a trickled body, an oversized one declared or streamed, a refused connection), each a typed transport error.
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeHttp } from '../../../src/runtime/node/http.js';
import { UpstreamTransportError, type UpstreamHttp } from '../../../src/base/upstream-http.js';

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const routes: Record<string, Route> = {
  '/echo': (req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json', 'retry-after': '7' });
    res.end(JSON.stringify({ method: req.method, auth: req.headers.authorization, body, url: req.url }));
  },
  '/chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.write('Zoë ');
    setTimeout(() => res.end('Hartley'), 20);
  },
  '/silent': () => undefined,
  '/trickle': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const timer = setInterval(() => res.write('x'), 50);
    res.on('close', () => clearInterval(timer));
  },
  '/declared-huge': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) });
    res.write('{');
  },
  '/streamed-huge': (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const more = (): void => {
      while (sent < 64 * 1024 * 1024 && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  },
  '/rate-limited': (_req, res) => {
    res.writeHead(429, { 'retry-after': '30' });
    res.end();
  },
};

describe('the Node upstream transport (undici dispatch)', () => {
  let server: Server;
  let base: string;
  let http: UpstreamHttp;
  let streamedHugeBytes = 0;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => routes[new URL(req.url!, 'http://x').pathname]!(req, res, body));
      if (req.url === '/streamed-huge') res.on('close', () => (streamedHugeBytes = res.socket?.bytesWritten ?? 0));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    http = createNodeHttp({ maxBodyBytes: 1024 * 1024 });
  });
  afterAll(async () => {
    await http.close?.();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const failure = async (p: Promise<unknown>): Promise<UpstreamTransportError> => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamTransportError);
    return err as UpstreamTransportError;
  };

  it('sends the method, headers and body, and reads the status, content type, Retry-After and body', async () => {
    const res = await http.request({
      method: 'POST',
      url: `${base}/echo?what=%2B44`,
      headers: { authorization: 'Bearer t', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
      timeoutMs: 2000,
    });
    expect(res).toMatchObject({ status: 200, contentType: 'application/json', retryAfter: '7' });
    expect(JSON.parse(res.body)).toEqual({
      method: 'POST',
      auth: 'Bearer t',
      body: 'grant_type=client_credentials',
      url: '/echo?what=%2B44',
    });
  });

  it('joins a body sent in chunks, decoding UTF-8 across them', async () => {
    const res = await http.request({ method: 'GET', url: `${base}/chunked`, headers: {}, timeoutMs: 2000 });
    expect(res.body).toBe('Zoë Hartley');
  });

  it('passes a 429 with its Retry-After through as an answer', async () => {
    const res = await http.request({ method: 'GET', url: `${base}/rate-limited`, headers: {}, timeoutMs: 2000 });
    expect(res).toMatchObject({ status: 429, retryAfter: '30', body: '' });
  });

  it('times out an upstream that never answers, within the request timeout', async () => {
    const started = performance.now();
    const err = await failure(http.request({ method: 'GET', url: `${base}/silent`, headers: {}, timeoutMs: 200 }));
    expect(err.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('times out a body trickled past the request timeout, although bytes keep coming', async () => {
    const started = performance.now();
    const err = await failure(http.request({ method: 'GET', url: `${base}/trickle`, headers: {}, timeoutMs: 300 }));
    expect(err.kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it('refuses an answer whose Content-Length passes the bound, without reading it', async () => {
    const err = await failure(
      http.request({ method: 'GET', url: `${base}/declared-huge`, headers: {}, timeoutMs: 5000 }),
    );
    expect(err.kind).toBe('too_large');
    expect(err.message).toMatch(/larger than 1048576 bytes/);
  });

  it('stops reading a streamed 64 MiB answer at the bound and closes its connection', async () => {
    const err = await failure(
      http.request({ method: 'GET', url: `${base}/streamed-huge`, headers: {}, timeoutMs: 10_000 }),
    );
    expect(err.kind).toBe('too_large');
    await new Promise((resolve) => setTimeout(resolve, 100));
    // What reached the socket: the bound plus what socket buffers hold, far from 64 MiB.
    expect(streamedHugeBytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('answers normally after those failures (the pool recovered)', async () => {
    const res = await http.request({ method: 'GET', url: `${base}/echo`, headers: {}, timeoutMs: 2000 });
    expect(res.status).toBe(200);
  });

  it('times out a connection the upstream never completes, within the request timeout, and drops it at the connect bound', async () => {
    // A listener in a stopped process: the kernel completes handshakes until its accept queue is full, then drops SYNs.
    const child = spawn(
      process.execPath,
      [
        '-e',
        "require('net').createServer().listen({ port: 0, host: '127.0.0.1', backlog: 1 }, function () { process.send(this.address().port); })",
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] },
    );
    try {
      const port = await new Promise<number>((resolve) => child.once('message', (p) => resolve(p as number)));
      child.kill('SIGSTOP');
      const fillers = Array.from({ length: 4 }, () => connect(port, '127.0.0.1').on('error', () => undefined));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const hung = createNodeHttp({ connectTimeoutMs: 300 });
      const started = performance.now();
      const err = await failure(
        hung.request({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: {}, timeoutMs: 300 }),
      );
      expect(err.kind).toBe('timeout');
      expect(performance.now() - started).toBeLessThan(1000);
      // The abandoned request stays queued only until the connect bound (UPSTREAM_TIMEOUT_MS), not undici's 10 s:
      // closing the pool, which waits for queued requests, is quick.
      const closing = performance.now();
      await hung.close?.();
      expect(performance.now() - closing).toBeLessThan(2000);
      for (const socket of fillers) socket.destroy();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('rejects a URL that is not absolute as a network failure, without throwing', async () => {
    const err = await failure(http.request({ method: 'GET', url: '/v2/contacts/search', headers: {}, timeoutMs: 200 }));
    expect(err.kind).toBe('network');
  });

  it('reports a refused connection as a network failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await failure(
      http.request({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: {}, timeoutMs: 2000 }),
    );
    expect(err.kind).toBe('network');
  });
});
