// The metrics listener (METRICS_PORT) meets the API port's request rules and bounds over real sockets: slow headers
// cut within HTTP_HEADERS_TIMEOUT_SECONDS, a declared body refused unread, a connection cap, loopback by default.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { openSocket, rawExchange, type OpenSocket } from '../helpers/raw-http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const closedWithin = async (open: OpenSocket, ms: number): Promise<number> => {
  const closedAt = await Promise.race([open.closed, new Promise<number>((r) => setTimeout(() => r(Infinity), ms))]);
  if (closedAt === Infinity) open.socket.destroy();
  return closedAt;
};

/** An address of this machine other than loopback, where one exists. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

const reachable = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('the metrics listener', () => {
  let stack: Stack;
  let metricsUrl: string;

  beforeAll(async () => {
    // The stack puts /metrics beside the API (METRICS_PORT=0); these tests need the listener of its own.
    stack = await startStack({ env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1', METRICS_PORT: String(await freePort()) } });
    metricsUrl = `http://127.0.0.1:${stack.gateway.metricsServer!.port}`;
  });
  afterAll(async () => {
    await stack.close();
  });

  it('cuts headers trickled in within the API port’s header timeout, answering 408 problem+json', async () => {
    const open = await openSocket(metricsUrl);
    open.socket.write('GET /metrics HTTP/1.1\r\n');
    const timer = setInterval(() => open.socket.write('X-Slow: y\r\n'), 200);
    const closedAt = await closedWithin(open, 8000);
    clearInterval(timer);
    // The bound (1 s) plus Node's check interval (at most 1 s) plus slack; without it Node allows 60 s.
    expect(closedAt).toBeLessThan(4000);
    expect(open.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(open.received()).toContain('application/problem+json');
  });

  it('refuses a declared gigabyte with 413 and Connection: close before reading a byte of it', async () => {
    const res = await rawExchange(metricsUrl, ['GET /metrics HTTP/1.1', 'Host: x', 'Content-Length: 1073741824']);
    expect(res.status).toBe(413);
    expect(res.headers['connection']).toBe('close');
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body)).toMatchObject({ status: 413, requestId: expect.any(String) });
    const post = await rawExchange(metricsUrl, ['POST /metrics HTTP/1.1', 'Host: x', 'Transfer-Encoding: chunked']);
    expect(post.status).toBe(413);
  });

  it('refuses a malformed Host as the API port does', async () => {
    const res = await rawExchange(metricsUrl, ['GET /metrics HTTP/1.1', 'Host: a b']);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400, requestId: expect.any(String) });
  });

  it('holds at most 64 connections at once and accepts again once one closes', async () => {
    const held = await Promise.all(Array.from({ length: 64 }, () => openSocket(metricsUrl)));
    await new Promise((r) => setTimeout(r, 100));
    const extra = await openSocket(metricsUrl);
    expect(await closedWithin(extra, 2000)).toBeLessThan(2000);
    for (const open of held) open.socket.destroy();
    await Promise.all(held.map((open) => open.closed));
    await new Promise((r) => setTimeout(r, 100));
    expect((await rawExchange(metricsUrl, ['GET /metrics HTTP/1.1', 'Host: x'])).status).toBe(200);
  });

  it('still answers a scrape', async () => {
    const res = await rawExchange(metricsUrl, ['GET /metrics HTTP/1.1', 'Host: x']);
    expect(res.status).toBe(200);
    expect(res.body).toContain('http_requests_total');
  });

  it('listens on loopback by default, out of reach of another host', async () => {
    expect(stack.gateway.config.metrics.host).toBe('127.0.0.1');
    if (outsideAddress === undefined) {
      if (process.env.CI === 'true') throw new Error('no non-loopback IPv4 address on this machine');
      console.warn('skipped the reach check: no non-loopback IPv4 address on this machine');
      return;
    }
    expect(await reachable('127.0.0.1', stack.gateway.metricsServer!.port)).toBe(true);
    expect(await reachable(outsideAddress, stack.gateway.metricsServer!.port)).toBe(false);
  });
});

describe('the metrics listener where Prometheus scrapes from another host', () => {
  it('is reachable on the machine’s outside address with the METRICS_HOST the compose file and Kubernetes set', async () => {
    const compose = parse(readFileSync('config/compose.yaml', 'utf8'), { merge: true }).services.gateway.environment;
    const configMap = parse(readFileSync('config/k8s/configmap.yaml', 'utf8')).data;
    const dockerfile = readFileSync('Dockerfile', 'utf8');
    expect(String(configMap.METRICS_HOST)).toBe(String(compose.METRICS_HOST));
    expect(dockerfile).toMatch(new RegExp(`METRICS_HOST=${String(compose.METRICS_HOST).replaceAll('.', '\\.')}\\b`));
    const stack = await startStack({
      env: { METRICS_HOST: String(compose.METRICS_HOST), METRICS_PORT: String(await freePort()) },
    });
    try {
      const port = stack.gateway.metricsServer!.port;
      if (outsideAddress === undefined) {
        if (process.env.CI === 'true') throw new Error('no non-loopback IPv4 address on this machine');
        console.warn('skipped the reach check: no non-loopback IPv4 address on this machine');
        return;
      }
      const res = await rawExchange(`http://${outsideAddress}:${port}`, ['GET /metrics HTTP/1.1', 'Host: x']);
      expect(res.status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});
