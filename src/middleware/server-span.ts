// The server span of every request the app answers (observability/tracing/http-spans.ts): the caller's trace
// continued, named by the route the request is for, ended with how it was answered; a problem body gets its trace id.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { problemWithTraceId } from '../base/errors.js';
import { endServerSpan, startServerSpan } from '../observability/tracing/http-spans.js';
import type { Span } from '../observability/tracing/span.js';
import type { Tracer } from '../observability/tracing/tracer.js';

export interface ServerSpanOptions {
  tracer: Tracer;
  /** The route template a method and path belong to (the access log's label), undefined when none matched. */
  routeOf: (method: string, path: string) => string | undefined;
  /** The caller's address the gateway trusts (TRUST_PROXY_HOPS). */
  addressOf: (c: Context) => string | undefined;
}

/** The span of a request: with tracing off, only the caller's context (nothing drawn or recorded). */
function started(options: ServerSpanOptions, c: Context<AppEnv>): Span {
  const { tracer } = options;
  const traceparent = c.req.header('traceparent');
  if (!tracer.enabled) return tracer.startServerSpan('', traceparent, c.req.header('tracestate'));
  const url = new URL(c.req.url);
  return startServerSpan(tracer, {
    method: c.req.method,
    route: options.routeOf(c.req.method, c.req.path),
    traceparent,
    tracestate: c.req.header('tracestate'),
    scheme: url.protocol === 'https:' ? 'https' : 'http',
    serverAddress: url.hostname,
    clientAddress: options.addressOf(c),
  });
}

/** The answer with the trace id in its problem body, and the problem's type; other answers as they are. */
async function traced(c: Context<AppEnv>, span: Span): Promise<string | undefined> {
  const traceId = span.context?.traceId;
  if (traceId === undefined || c.res.headers.get('content-type') !== 'application/problem+json') return undefined;
  const problem = problemWithTraceId(await c.res.text(), traceId);
  c.res = new Response(problem.body, c.res);
  return problem.type;
}

export function serverSpan(options: ServerSpanOptions): MiddlewareHandler<AppEnv> {
  return async function serverSpan(c, next) {
    const span = started(options, c);
    c.set('span', span);
    let threw = true;
    try {
      await next();
      threw = false;
    } finally {
      const problemType = threw ? undefined : await traced(c, span);
      endServerSpan(span, {
        status: threw ? 500 : c.res.status,
        errorType: threw ? 'exception' : undefined,
        cacheStatus: c.get('lookup')?.cache,
        clientId: c.get('clientId'),
        problemType,
      });
    }
  };
}
