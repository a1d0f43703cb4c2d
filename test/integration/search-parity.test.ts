// One table of search requests, every spelling an adversary tries, sent to each door of the search's JSON renderer: Node's
// server over a real socket (its own door), the app in process (the Hono route), and the Worker in workerd (workerd
// serve, the Hono route). The answers are identical but for the request id a gateway makes up, `Date`, `Age`, the
// times derived from the clock (`ttl` in Cache-Status, `t` in RateLimit) and the connection's own fields. Node's
// door and the app in process also write the same access-log records and export the same spans.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/runtime/node/gateway.js';
import { startSimulatorServer, type SimulatorServer } from '../../src/simulator/server.js';
import type { RawResponse } from '../helpers/raw-http.js';
import { awayFromMinuteEnd } from '../helpers/minute-window.js';
import { captureLogger } from '../helpers/recorders.js';
import { CLIENTS, loginAt, stackEnv, UPSTREAM_CLIENTS } from '../helpers/stack.js';
import { startThreeDoors, WORKERD, type ThreeDoors } from '../helpers/three-doors.js';
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

const RATE = 40;
const SEARCH = '/v2/contacts/search';
const q = (what: string) => `${SEARCH}?what=${encodeURIComponent(what)}`;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

interface Row {
  name: string;
  method?: string;
  target: string;
  /** Header lines as written; `Host: localhost` is added unless a row writes its own. */
  headers: (token: string) => string[];
  body?: string;
  /** Run on the simulator before the row is sent to every door, and after. */
  before?: (sim: SimulatorServer) => void;
  after?: (sim: SimulatorServer) => void;
  /** Sent this many times to each door; the last answers are compared. */
  times?: number;
  /** What every door must answer. */
  status: number;
  /** The client whose token the row sends; default crm. */
  client?: 'crm' | 'pbx';
  /**
   * Requests workerd refuses itself, with a bare 500 before any Worker code runs (a malformed or repeated Host, an
   * absolute-form target): that door only shows the gateway never saw them. Cloudflare's edge refuses them too.
   */
  refusedByWorkerd?: true;
}

const bearer = (token: string) => `Authorization: Bearer ${token}`;
const id = (value: string) => `X-Request-Id: ${value}`;

const ROWS: Row[] = [
  { name: 'a miss', target: q('020 7946 0002'), headers: (t) => [bearer(t), id('row-miss')], status: 200 },
  { name: 'a hit', target: q('020 7946 0002'), headers: (t) => [bearer(t), id('row-hit')], status: 200 },
  { name: 'a hit by another spelling', target: q('+44 20 7946 0002'), headers: (t) => [bearer(t)], status: 200 },
  { name: 'no Authorization', target: q('020 7946 0002'), headers: () => [id('row-noauth')], status: 401 },
  {
    name: 'the scheme in lower case',
    target: q('020 7946 0002'),
    headers: (t) => [`Authorization: bearer ${t}`],
    status: 200,
  },
  {
    name: 'the field name in upper case',
    target: q('020 7946 0002'),
    headers: (t) => [`AUTHORIZATION: Bearer ${t}`],
    status: 200,
  },
  {
    name: 'two Authorization fields: a valid Bearer, then Basic',
    target: q('020 7946 0003'),
    headers: (t) => [bearer(t), `Authorization: ${basic('crm', CLIENTS.crm)}`],
    status: 401,
  },
  {
    name: 'two Authorization fields: Basic, then a valid Bearer',
    target: q('020 7946 0003'),
    headers: (t) => [`Authorization: ${basic('crm', CLIENTS.crm)}`, bearer(t)],
    status: 401,
  },
  { name: 'a Bearer token not ours', target: q('020 7946 0002'), headers: () => [bearer('abc.def.ghi')], status: 401 },
  {
    name: 'Basic credentials of a registered client',
    target: q('020 7946 0002'),
    headers: () => [`Authorization: ${basic('crm', CLIENTS.crm)}`],
    status: 200,
  },
  {
    name: 'Basic credentials with a wrong secret',
    target: q('020 7946 0002'),
    headers: () => [`Authorization: ${basic('crm', 'wrong-secret-0123456789')}`],
    status: 401,
  },
  {
    name: 'Host: a b',
    target: q('020 7946 0002'),
    headers: (t) => ['Host: a b', bearer(t), id('row-host')],
    status: 400,
    refusedByWorkerd: true,
  },
  {
    name: 'two Host fields',
    target: q('020 7946 0002'),
    headers: (t) => ['Host: localhost', 'Host: example.com', bearer(t)],
    status: 400,
    refusedByWorkerd: true,
  },
  {
    name: 'an absolute-form target',
    target: `http://localhost${q('020 7946 0002')}`,
    headers: (t) => [bearer(t)],
    status: 200,
    // Another client: the one whose rate the other rows count never sees it, on any door.
    client: 'pbx',
    refusedByWorkerd: true,
  },
  { name: 'what twice', target: `${q('020 7946 0002')}&what=1`, headers: (t) => [bearer(t)], status: 400 },
  { name: 'WHAT and what', target: `${q('020 7946 0002')}&WHAT=1`, headers: (t) => [bearer(t)], status: 400 },
  {
    name: 'what spelled wh%61t',
    target: q('020 7946 0002').replace('what', 'wh%61t'),
    headers: (t) => [bearer(t)],
    status: 200,
  },
  { name: 'no what', target: SEARCH, headers: (t) => [bearer(t), id('row-nowhat')], status: 400 },
  { name: 'not a possible number', target: q('12'), headers: (t) => [bearer(t)], status: 400 },
  { name: 'HEAD', method: 'HEAD', target: q('020 7946 0002'), headers: (t) => [bearer(t)], status: 200 },
  { name: 'OPTIONS', method: 'OPTIONS', target: q('020 7946 0002'), headers: (t) => [bearer(t)], status: 405 },
  {
    name: 'a request id of 65 characters',
    target: q('020 7946 0002'),
    headers: (t) => [bearer(t), id('r'.repeat(65))],
    status: 200,
  },
  {
    name: 'a request id with an encoded CR LF',
    target: q('020 7946 0002'),
    headers: (t) => [bearer(t), id('abc%0D%0AX-Injected:%201')],
    status: 200,
  },
  {
    name: 'a small body on GET',
    target: q('020 7946 0002'),
    headers: (t) => [bearer(t), 'Content-Type: text/plain', 'Content-Length: 5'],
    body: 'hello',
    status: 200,
  },
  {
    name: 'a gigabyte declared on GET, without a token',
    target: q('020 7946 0002'),
    headers: () => ['Content-Length: 1073741824'],
    status: 413,
  },
  {
    name: 'a chunked body on GET',
    target: q('020 7946 0002'),
    headers: (t) => [bearer(t), 'Transfer-Encoding: chunked'],
    status: 413,
  },
  {
    name: 'Prefer: wait=2 on a miss',
    target: q('0161 496 0001'),
    headers: (t) => [bearer(t), 'Prefer: wait=2'],
    status: 200,
  },
  {
    name: 'an upstream error',
    target: q('020 7946 0004'),
    headers: (t) => [bearer(t), id('row-502')],
    before: (sim) => sim.controls.setFaults({ errorRate: 1 }),
    after: (sim) => sim.controls.setFaults({ errorRate: 0 }),
    status: 502,
  },
  {
    name: "the caller's wait passes while the upstream is slow",
    target: q('020 7946 0005'),
    headers: (t) => [bearer(t), 'Prefer: wait=0.2', id('row-504')],
    before: (sim) => sim.controls.setFaults({ latencyMs: 700 }),
    after: (sim) => sim.controls.setFaults({ latencyMs: 0 }),
    status: 504,
  },
  {
    name: 'the upstream rate limits',
    target: q('020 7946 0006'),
    headers: (t) => [bearer(t), id('row-503')],
    before: (sim) => sim.controls.setFaults({ rateLimitRate: 1, rateLimitRetryAfter: '1' }),
    after: (sim) => sim.controls.setFaults({ rateLimitRate: 0, rateLimitRetryAfter: null }),
    status: 503,
  },
  {
    name: 'over the client rate',
    target: q('020 7946 0002'),
    headers: (t) => [bearer(t), id('row-429')],
    times: RATE,
    status: 429,
  },
];

/** The parts of an answer every door must give alike. */
function comparable(res: RawResponse, generatedId: boolean) {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (['date', 'age', 'connection', 'keep-alive', 'transfer-encoding'].includes(name)) continue;
    if (name === 'x-request-id' && generatedId) continue;
    headers[name] = name === 'retry-after' ? 'N' : value.replace(/ttl=-?\d+/, 'ttl=N').replace(/;t=\d+/g, ';t=N');
  }
  let body: unknown = res.body;
  if (res.headers['content-type']?.includes('json') && res.body !== '') {
    const parsed = JSON.parse(res.body) as Record<string, unknown>;
    if (generatedId) delete parsed.requestId;
    if (typeof parsed.detail === 'string') parsed.detail = parsed.detail.replace(/in \d+ s\b/, 'in N s');
    body = parsed;
  }
  return { status: res.status, headers, body };
}

const hasGoodId = (lines: string[]) => lines.some((l) => /^X-Request-Id: [\w=-]{1,64}$/.test(l));

const traceOf = (row: Row) => traceIdOf(ROWS.indexOf(row) + 1);

async function searchCounts(gateway: RunningGateway): Promise<string[]> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith('callerid_gateway_http_requests_total{') && l.includes(SEARCH));
}

describe('the search answers alike on every door', () => {
  let simulator: SimulatorServer;
  let three: ThreeDoors;
  let receiver: OtlpReceiver;
  const logs = { socket: captureLogger(), inProcess: captureLogger() };
  const gatewayTokens = { crm: '', pbx: '' };

  beforeAll(async () => {
    simulator = await startSimulatorServer({ clients: UPSTREAM_CLIENTS });
    receiver = await startOtlpReceiver();
    const env = {
      ...(await stackEnv(simulator.url)),
      CLIENT_RATE_PER_MINUTE: String(RATE),
      UPSTREAM_TIMEOUT_MS: '1500',
      // One key for every door, so the number's hash in their log lines is the same.
      LOG_HASH_KEY: 'parity-log-hash-key-0123456789abcdef',
    };
    three = await startThreeDoors(env, {
      socketLogger: logs.socket,
      inProcessLogger: logs.inProcess,
      // Both gateways trace, to one receiver; the Worker only passes the caller's trace on.
      ...tracingEnvs(receiver),
    });
    // One token for every door: they share the signing key and the registered clients.
    gatewayTokens.crm = await loginAt(three.socket.url, 'crm', CLIENTS.crm);
    gatewayTokens.pbx = await loginAt(three.socket.url, 'pbx', CLIENTS.pbx);
  }, 150_000);

  afterAll(async () => {
    await three?.close();
    await simulator?.close();
    await receiver?.close();
  });

  it.each(ROWS.map((row) => [row.name, row] as const))('%s', { timeout: 60_000 }, async (_name, row) => {
    // Each door counts the client's searches per clock minute: a row that straddled a minute would see another
    // RateLimit remaining on the doors asked after the turn.
    await awayFromMinuteEnd();
    const token = gatewayTokens[row.client ?? 'crm'];
    const generatedId = !hasGoodId(row.headers(token));
    const traceId = traceOf(row);
    const { doors } = three;
    const gatewayDoors = doors.filter((d) => !(row.refusedByWorkerd && d.name === WORKERD));
    const lines = [...row.headers(token), traceparentLine(traceId)];
    const request = { method: row.method ?? 'GET', target: row.target, lines, body: row.body };
    row.before?.(simulator);
    const answers: RawResponse[] = [];
    try {
      for (const door of doors) {
        let res: RawResponse | undefined;
        for (let i = 0; i < (row.times ?? 1); i++) res = await door.send(request);
        if (gatewayDoors.includes(door)) answers.push(res!);
        // workerd's own refusal: no request id, so no gateway code answered it.
        else expect([res!.status, res!.headers['x-request-id']], door.name).toEqual([500, undefined]);
      }
    } finally {
      row.after?.(simulator);
    }
    for (const [i, res] of answers.entries()) {
      expect(res.status, gatewayDoors[i]!.name).toBe(row.status);
      expect(res.headers['x-request-id'], gatewayDoors[i]!.name).toMatch(/^[\w=-]{1,64}$/);
      if (row.method === 'HEAD') expect(res.body, gatewayDoors[i]!.name).toBe('');
    }
    const [first, ...rest] = answers.map((a) => comparable(a, generatedId));
    for (const [i, other] of rest.entries()) expect(other, gatewayDoors[i + 1]!.name).toEqual(first);
    // Node's door writes the same records as the app's access log, the number only as its keyed hash.
    const records = recordsOf(logs.socket.lines, traceId, !generatedId);
    expect(records).toHaveLength(row.times ?? 1);
    expect(records).toEqual(recordsOf(logs.inProcess.lines, traceId, !generatedId));
    // And exports the same spans, the server span continuing the caller's trace.
    const spans = await spansOfTrace(three, receiver, traceId);
    const serverSpans = spans.socket.filter((s) => s.kind === SPAN_KIND.SERVER && s.parentSpanId === CALLER_SPAN);
    expect(serverSpans).toHaveLength(row.times ?? 1);
    if (lines.some((l) => /^host:/i.test(l))) withoutRefusedHost(spans);
    expect(comparableSpans(spans.socket)).toEqual(comparableSpans(spans.inProcess));
  });

  it('counts every search alike, refusals included', async () => {
    const counts = await searchCounts(three.socket);
    expect(counts.some((l) => l.includes('status="400"'))).toBe(true);
    expect(counts.some((l) => l.includes('status="413"'))).toBe(true);
    expect(counts).toEqual(await searchCounts(three.inProcess));
  });
});
