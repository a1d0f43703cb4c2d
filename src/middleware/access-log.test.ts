import { Hono } from 'hono';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../http/app-env.js';
import { accessLog } from './access-log.js';
import type { LogLevel } from '../observability/logger.js';
import { createMetrics } from '../observability/metrics.js';
import { createKeyedHasher } from '../observability/keyed-hash.js';
import { createRequestRecorder } from '../observability/request-recorder.js';
import { PropagatingSpan, RecordingSpan, type Span } from '../observability/tracing/span.js';
import { captureLogger } from '../../test/helpers/recorders.js';

function appWith(options: { level?: LogLevel; span?: Span } = {}) {
  const logger = captureLogger();
  const order = ['debug', 'info', 'warn', 'error'];
  const enabled = (lvl: LogLevel) => order.indexOf(lvl) >= order.indexOf(options.level ?? 'debug');
  const registry = new Registry();
  const metrics = createMetrics({ registry });
  const hasher = createKeyedHasher({ key: 'access-log-test' });
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set('requestId', 'rid-1');
    await next();
  });
  app.use(accessLog({ record: createRequestRecorder({ logger: { ...logger, enabled }, metrics, hasher }) }));
  app.use(async (c, next) => {
    if (options.span) c.set('span', options.span);
    await next();
  });
  app.get('/items/:id', (c) => {
    c.set('clientId', 'crm');
    c.set('lookup', { e164: '+442079460001', cache: 'hit' });
    return c.json({ ok: true });
  });
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/boom', () => {
    throw new Error('boom');
  });
  app.onError((_err, c) => c.text('failed', 500));
  return { app, logs: logger.lines, metrics, hasher };
}

/** Waits (at most 2 s) until `done()`: the line is written once the number's keyed hash is ready. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('accessLog', () => {
  it('logs the route template, never the path or query, with status, duration, cache result, ids and the number only as a hash', async () => {
    const { app, logs, hasher } = appWith();
    const res = await app.request('/items/0201234567?what=%2B442079460001');
    expect(res.status).toBe(200);
    await until(() => logs.length > 0);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      fields: {
        event: 'request',
        requestId: 'rid-1',
        method: 'GET',
        route: '/items/:id',
        status: 200,
        clientId: 'crm',
        cache: 'hit',
        numberHash: await hasher.hash('+442079460001'),
      },
    });
    expect(logs[0]!.fields.durationMs).toEqual(expect.any(Number));
    expect(JSON.stringify(logs)).not.toMatch(/0201234567|2079460001/);
  });

  it('logs probes at debug, and builds nothing when that level is off', async () => {
    const on = appWith({ level: 'debug' });
    await on.app.request('/healthz');
    expect(on.logs[0]).toMatchObject({ level: 'debug', fields: { route: '/healthz', status: 200 } });
    const off = appWith({ level: 'info' });
    await off.app.request('/healthz');
    expect(off.logs).toHaveLength(0);
  });

  it('counts and logs a failing handler as 500, and an unknown path as "unmatched"', async () => {
    const { app, logs, metrics } = appWith();
    expect((await app.request('/boom')).status).toBe(500);
    expect((await app.request('/nothing/+442079460001')).status).toBe(404);
    expect(logs.map((l) => [l.level, l.fields.route, l.fields.status])).toEqual([
      ['warn', '/boom', 500],
      ['info', 'unmatched', 404],
    ]);
    const text = (await metrics.render()).body;
    expect(text).toContain('callerid_gateway_http_requests_total{route="/boom",method="GET",status="500"} 1');
    expect(text).toContain('callerid_gateway_http_requests_total{route="unmatched",method="GET",status="404"} 1');
    expect(text).not.toContain('2079460001');
  });

  it("makes a recorded span's ids the duration's exemplar, and a span recorded nowhere none", async () => {
    const context = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      sampled: true,
      random: false,
    };
    const sink = { now: () => Date.now(), end: () => {} };
    const recorded = appWith({
      span: new RecordingSpan(sink, 'GET /healthz', 'server', { ...context, traceState: undefined }, undefined),
    });
    await recorded.app.request('/healthz');
    const exemplars = (await recorded.metrics.render('openmetrics')).body.split('\n').filter((l) => l.includes(' # {'));
    expect(exemplars).toEqual([
      expect.stringContaining(
        `route="/healthz",method="GET",status="200"} 1 # {trace_id="${context.traceId}",span_id="${context.spanId}"} `,
      ),
    ]);
    // A caller's sampled trace the gateway does not record (tracing off): its ids are logged, never an exemplar.
    const propagated = appWith({ span: new PropagatingSpan({ ...context, traceState: undefined }) });
    await propagated.app.request('/healthz');
    expect(propagated.logs[0]!.fields.traceId).toBe(context.traceId);
    expect((await propagated.metrics.render('openmetrics')).body).not.toContain(' # {');
  });
});
