// One table of odd request shapes sent to every route that takes requests from outside (the search, CNAM, the batch,
// the console's search, both logins) on every door: Node's server over a real socket, the app in process, and the
// Worker in workerd; and to the metrics listener where a shape applies. Every shared refusal has the same status and
// problem type on every route and door, carries a request id, and is logged and counted once; Node's server and the
// app in process write the same access-log record and export the same span for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import { freePort } from '../helpers/free-port.js';
import type { RawResponse } from '../helpers/raw-http.js';
import { captureLogger } from '../helpers/recorders.js';
import { CLIENTS, loginAt, stackEnv, UPSTREAM_CLIENTS } from '../helpers/stack.js';
import {
  declaresBody,
  NODE_SERVER,
  socketDoor,
  startThreeDoors,
  WORKERD,
  type Door,
  type ThreeDoors,
} from '../helpers/three-doors.js';
import {
  CALLER_SPAN,
  comparableSpans,
  recordsOf,
  spansOfTrace,
  traceIdOf,
  traceparentLine,
  tracingEnvs,
  withoutRefusedHost,
} from '../helpers/door-records.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { SPAN_KIND } from '../helpers/traced-stack.js';

interface Route {
  method: 'GET' | 'POST';
  /** The route template, as the access log names it. */
  route: string;
  target: string;
  /** A body the route reads, for routes that take one. */
  body?: string;
  contentType?: string;
}

const ROUTES: Route[] = [
  { method: 'GET', route: '/v2/contacts/search', target: '/v2/contacts/search?what=%2B442079460002' },
  { method: 'GET', route: '/v2/contacts/cnam', target: '/v2/contacts/cnam?what=%2B442079460002' },
  {
    method: 'POST',
    route: '/v2/contacts/search/batch',
    target: '/v2/contacts/search/batch',
    body: '{"numbers":["+442079460002"]}',
    contentType: 'application/json',
  },
  { method: 'GET', route: '/console/v2/contacts/search', target: '/console/v2/contacts/search?what=%2B442079460002' },
  {
    method: 'POST',
    route: '/token/login',
    target: '/token/login',
    body: `grant_type=client_credentials&client_id=crm&client_secret=${CLIENTS.crm}`,
    contentType: 'application/x-www-form-urlencoded',
  },
  {
    method: 'POST',
    route: '/oauth2/token',
    target: '/oauth2/token',
    body: `grant_type=client_credentials&client_id=crm&client_secret=${CLIENTS.crm}`,
    contentType: 'application/x-www-form-urlencoded',
  },
];

interface Shape {
  name: string;
  /** Header lines as written; `Host: localhost` unless the shape writes its own. */
  headers: (token: string) => string[];
  /** Only for routes of this method (a body rule differs by whether a route takes a body). */
  only?: 'GET' | 'POST';
  status: number;
  type: string;
  /** workerd refuses it itself (a bare 500 before any Worker code runs), as Cloudflare's edge does. */
  refusedByWorkerd?: true;
  /** Whether the answer closes the connection (a body it did not read). */
  closes?: true;
  /** The shape applies to the metrics listener too. */
  metrics?: true;
}

const SHAPES: Shape[] = [
  {
    name: 'Host: a b',
    headers: () => ['Host: a b'],
    status: 400,
    type: 'bad-request',
    refusedByWorkerd: true,
    closes: true,
    metrics: true,
  },
  {
    name: 'Host: user@evil',
    headers: () => ['Host: user@evil'],
    status: 400,
    type: 'bad-request',
    refusedByWorkerd: true,
    closes: true,
    metrics: true,
  },
  {
    name: 'Host: x:abc',
    headers: () => ['Host: x:abc'],
    status: 400,
    type: 'bad-request',
    closes: true,
    metrics: true,
  },
  {
    name: 'Host: a%20b',
    headers: () => ['Host: a%20b'],
    status: 400,
    type: 'bad-request',
    refusedByWorkerd: true,
    closes: true,
    metrics: true,
  },
  {
    name: 'Host: a:99999',
    headers: () => ['Host: a:99999'],
    status: 400,
    type: 'bad-request',
    closes: true,
    metrics: true,
  },
  {
    name: 'Host: a:',
    headers: () => ['Host: a:'],
    status: 400,
    type: 'bad-request',
    closes: true,
    metrics: true,
  },
  {
    name: 'Host: 1.2.3.4.5',
    headers: () => ['Host: 1.2.3.4.5'],
    status: 400,
    type: 'bad-request',
    closes: true,
    metrics: true,
  },
  {
    name: 'two Authorization fields',
    headers: (t) => [
      `Authorization: Bearer ${t}`,
      `Authorization: Basic ${Buffer.from(`crm:${CLIENTS.crm}`).toString('base64')}`,
    ],
    status: 401,
    type: 'unauthorized',
  },
  {
    name: 'a gigabyte declared',
    headers: () => ['Content-Length: 1073741824'],
    status: 413,
    type: 'payload-too-large',
    closes: true,
    metrics: true,
  },
  {
    name: 'Expect: 100-continue with 2000 bytes declared on GET',
    headers: () => ['Expect: 100-continue', 'Content-Length: 2000'],
    only: 'GET',
    status: 413,
    type: 'payload-too-large',
    closes: true,
    metrics: true,
  },
  {
    name: 'Transfer-Encoding: identity on GET',
    headers: () => ['Transfer-Encoding: identity'],
    only: 'GET',
    refusedByWorkerd: true,
    status: 413,
    type: 'payload-too-large',
    closes: true,
    metrics: true,
  },
  {
    name: 'a chunked body on GET',
    headers: () => ['Transfer-Encoding: chunked'],
    only: 'GET',
    status: 413,
    type: 'payload-too-large',
    closes: true,
    metrics: true,
  },
];

const typeOf = (res: RawResponse): string | undefined =>
  res.headers['content-type'] === 'application/problem+json'
    ? (JSON.parse(res.body) as { type: string }).type.replace(/^.*#/, '')
    : undefined;

describe('every route and door refuses odd requests alike', () => {
  let simulator: SimulatorServer;
  let three: ThreeDoors;
  let socket: RunningGateway;
  const logs = captureLogger();
  const inProcessLogs = captureLogger();
  let receiver: OtlpReceiver;
  let token = '';
  let doors: Door[] = [];

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    receiver = await startOtlpReceiver();
    const env = { ...(await stackEnv(simulator.url)), CONSOLE_PROVIDER: 'swissdir' };
    // Node's server and the app in process trace, to one receiver; the Worker only passes the caller's trace on.
    const { socketEnv, inProcessEnv } = tracingEnvs(receiver);
    three = await startThreeDoors(env, {
      socketEnv: { ...socketEnv, METRICS_PORT: String(await freePort()) },
      inProcessEnv,
      socketLogger: logs,
      inProcessLogger: inProcessLogs,
    });
    ({ doors, socket } = three);
    token = await loginAt(socket.url, 'crm', CLIENTS.crm);
  }, 150_000);

  afterAll(async () => {
    await three?.close();
    await simulator?.close();
    await receiver?.close();
  });

  const cases = SHAPES.flatMap((shape) =>
    ROUTES.filter((r) => shape.only === undefined || shape.only === r.method).map(
      (route) => [`${shape.name} → ${route.method} ${route.route}`, shape, route] as const,
    ),
  );

  it.each(cases)('%s', { timeout: 30_000 }, async (name, shape, route) => {
    const traceId = traceIdOf(cases.findIndex((c) => c[0] === name) + 1);
    let n = 0;
    for (const door of doors) {
      const requestId = `parity-${Math.random().toString(36).slice(2)}`;
      const lines = [...shape.headers(token), `X-Request-Id: ${requestId}`, traceparentLine(traceId)];
      // The route's own body goes only with a shape that declares none of its own.
      const res = await door.send({ ...route, lines, body: declaresBody(lines) ? undefined : route.body });
      if (shape.refusedByWorkerd && door.name === WORKERD) {
        // workerd's own refusal: no request id, so no gateway code answered it.
        expect([res.status, res.headers['x-request-id']], door.name).toEqual([500, undefined]);
        continue;
      }
      expect([res.status, typeOf(res)], door.name).toEqual([shape.status, shape.type]);
      expect(JSON.parse(res.body), door.name).toMatchObject({ requestId, status: shape.status });
      if (shape.closes && door.name === NODE_SERVER) expect(res.headers['connection'], door.name).toBe('close');
      if (door.name === NODE_SERVER) {
        // One access-log line, for the route the request was for.
        const lines = logs.lines.filter((l) => l.fields.event === 'request' && l.fields.requestId === requestId);
        expect(
          lines.map((l) => [l.fields.route, l.fields.status]),
          door.name,
        ).toEqual([[route.route, shape.status]]);
      }
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(2);
    // Node's server (its request rules) and the app in process write the same record and export the same span.
    expect(recordsOf(logs.lines, traceId, false)).toEqual(recordsOf(inProcessLogs.lines, traceId, false));
    const spans = await spansOfTrace(three, receiver, traceId);
    expect(spans.socket.map((s) => [s.kind, s.parentSpanId])).toEqual([[SPAN_KIND.SERVER, CALLER_SPAN]]);
    if (shape.name.startsWith('Host:')) withoutRefusedHost(spans);
    expect(comparableSpans(spans.socket)).toEqual(comparableSpans(spans.inProcess));
  });

  it.each(SHAPES.filter((s) => s.metrics).map((s) => [s.name, s] as const))(
    '%s → the metrics listener',
    async (_name, shape) => {
      const base = `http://127.0.0.1:${socket.metricsServer!.port}`;
      const res = await socketDoor('metrics', base).send({
        method: 'GET',
        target: '/metrics',
        lines: shape.headers(token),
      });
      expect([res.status, typeOf(res)]).toEqual([shape.status, shape.type]);
      if (shape.closes) expect(res.headers['connection']).toBe('close');
    },
  );

  it('counts every refusal once, by its route and status', async () => {
    const text = await (await fetch(`http://127.0.0.1:${socket.metricsServer!.port}/metrics`)).text();
    const count = (route: string, status: number) =>
      text
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('callerid_gateway_http_requests_total{') &&
            l.includes(`route="${route}"`) &&
            l.includes(`status="${status}"`),
        )
        .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    for (const route of ROUTES) {
      const expected = SHAPES.filter(
        (s) => (s.only === undefined || s.only === route.method) && s.status === 413,
      ).length;
      expect(count(route.route, 413), route.route).toBe(expected);
    }
  });

  it('answers 404 for a target that starts under /console and leaves it, on Node', async () => {
    for (const target of [
      '/%63onsole/../healthz',
      '/./console/../healthz',
      '/console/%2e%2e/healthz',
      '/CONSOLE/../healthz',
    ]) {
      const res = await socketDoor(NODE_SERVER, socket.url).send({ method: 'GET', target, lines: [] });
      expect([res.status, typeOf(res)], target).toEqual([404, 'not-found']);
    }
    expect(
      (await socketDoor(NODE_SERVER, socket.url).send({ method: 'GET', target: '/./healthz', lines: [] })).status,
    ).toBe(200);
  });
});
