// Bench child: the gateway's cache-hit job built from stock parts, each used the way its own docs show it: a Hono app
// on @hono/node-server, hono/request-id, hono/jwt verifying the gateway's HS256 token, @hono/prometheus's RED
// metrics, hono-pino's request log (pino's default destination: stdout, where the benched gateway logs too),
// rate-limiter-flexible's RateLimiterMemory per client with the RateLimit header fields, libphonenumber-js
// normalising `what`, and an LRUCache holding the answer per E.164 number. It answers a hit with the gateway's body
// and header fields. Only hits are measured: the cache holds the number the bench asks for (BENCH_BODY_FILE,
// BENCH_NUMBER); any other number answers 404. With OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, it is traced the way a team
// would assemble it from OpenTelemetry's stock parts: @hono/otel's middleware in front, sdk-trace-base's provider with
// a parent-based trace-id-ratio sampler (OTEL_TRACES_SAMPLER_ARG) and its BatchSpanProcessor (the OTEL_BSP_* defaults),
// and the OTLP/HTTP protobuf exporter (the endpoint and timeout from its own OTEL_* variables).
import { readFileSync } from 'node:fs';
import { httpInstrumentationMiddleware } from '@hono/otel';
import { serve } from '@hono/node-server';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { prometheus } from '@hono/prometheus';
import { Hono } from 'hono';
import { jwt } from 'hono/jwt';
import { requestId } from 'hono/request-id';
import { pinoLogger } from 'hono-pino';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory } from 'rate-limiter-flexible';

const TTL_MS = 86_400_000;
const RATE = Number(process.env.CLIENT_RATE_PER_MINUTE ?? '600');
const WINDOW_SECONDS = 60;
const DEFAULT_REGION = process.env.DEFAULT_REGION ?? 'GB';

const answers = new LRUCache({ max: 10_000, ttl: TTL_MS });
answers.set(process.env.BENCH_NUMBER, {
  body: readFileSync(process.env.BENCH_BODY_FILE, 'utf8'),
  storedAt: Date.now(),
});
const limiter = new RateLimiterMemory({ points: RATE, duration: WINDOW_SECONDS });
const { printMetrics, registerMetrics } = prometheus();

const problem = (c, status, title, extra = {}) =>
  c.body(JSON.stringify({ title, status, requestId: c.get('requestId') }), status, {
    'content-type': 'application/problem+json',
    ...extra,
  });

const app = new Hono();
if (process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
  const tracerProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'stock-parts' }),
    sampler: new ParentBasedSampler({
      root: new TraceIdRatioBasedSampler(Number(process.env.OTEL_TRACES_SAMPLER_ARG ?? '1')),
    }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  app.use(httpInstrumentationMiddleware({ tracerProvider }));
}
app.use(requestId());
app.use(
  pinoLogger({
    // hono-pino's documented bindings, less the request's header fields: they hold the client's token.
    http: {
      onReqBindings: (c) => ({ req: { method: c.req.method, url: c.req.path } }),
      onResBindings: (c) => ({ res: { status: c.res.status } }),
    },
  }),
);
app.use('*', registerMetrics);
app.get('/metrics', printMetrics);
app.use(
  '/v2/*',
  jwt({ secret: process.env.GATEWAY_TOKEN_SECRET, alg: 'HS256', verification: { iss: 'callerid-gateway' } }),
);
app.get('/v2/contacts/search', async (c) => {
  const clientId = c.get('jwtPayload').sub;
  c.get('logger').assign({ clientId });
  let rate;
  try {
    rate = await limiter.consume(clientId);
  } catch (refused) {
    const retryAfter = Math.ceil(refused.msBeforeNext / 1000);
    return problem(c, 429, 'Too many requests', {
      'retry-after': String(retryAfter),
      'ratelimit-policy': `"client";q=${RATE};w=${WINDOW_SECONDS}`,
      ratelimit: `"client";r=0;t=${retryAfter}`,
    });
  }
  c.header('ratelimit-policy', `"client";q=${RATE};w=${WINDOW_SECONDS}`);
  c.header('ratelimit', `"client";r=${rate.remainingPoints};t=${Math.ceil(rate.msBeforeNext / 1000)}`);
  const number = parsePhoneNumberFromString(c.req.query('what') ?? '', DEFAULT_REGION);
  if (number === undefined || !number.isPossible()) return problem(c, 400, 'Not a possible phone number');
  const answer = answers.get(number.number);
  if (answer === undefined) return problem(c, 404, 'Not in the cache');
  c.get('logger').assign({ cache: 'hit' });
  const age = Math.floor((Date.now() - answer.storedAt) / 1000);
  return c.body(answer.body, 200, {
    'content-type': 'application/json',
    'cache-control': 'private, no-store',
    'cache-status': `callerid-gateway; hit; ttl=${Math.floor(answers.getRemainingTTL(number.number) / 1000)}`,
    age: String(age),
  });
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) =>
  process.send({ type: 'ready', url: `http://127.0.0.1:${info.port}` }),
);
server.keepAliveTimeout = 60_000;
process.on('message', (msg) => msg?.type === 'stop' && process.exit(0));
