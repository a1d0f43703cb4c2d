// The server span of every request the app answers (observability/tracing/http-spans.ts): the caller's trace
// continued, named by the route the request is for, ended with how it was answered; a problem body gets its trace id.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { closeServerSpan, openServerSpan, takesTraceId, type Arrival } from '../observability/served-request.js';
import type { Tracer } from '../observability/tracing/tracer.js';

export interface ServerSpanOptions {
  tracer: Tracer;
  /** The route template a method and path belong to (the access log's label), undefined when none matched. */
  routeOf: (method: string, path: string) => string | undefined;
  /** The caller's address the gateway trusts (TRUST_PROXY_HOPS). */
  addressOf: (c: Context) => string | undefined;
  /** The request's HTTP version (`1.1`, `2`) where the runtime tells it. */
  protocolOf?: ((c: Context) => string | undefined) | undefined;
}

/** Where the app's requests arrive: the URL's scheme, path, host and port, the trusted client address. */
function arrivalOf(options: ServerSpanOptions): Arrival<Context<AppEnv>> {
  return (c) => {
    const url = new URL(c.req.url);
    return {
      scheme: url.protocol === 'https:' ? 'https' : 'http',
      path: url.pathname,
      serverAddress: url.hostname,
      serverPort: url.port === '' ? undefined : Number(url.port),
      protocolVersion: options.protocolOf?.(c),
      clientAddress: options.addressOf(c),
    };
  };
}

export function serverSpan(options: ServerSpanOptions): MiddlewareHandler<AppEnv> {
  const arrival = arrivalOf(options);
  return async function serverSpan(c, next) {
    const route = options.routeOf(c.req.method, c.req.path);
    const span = openServerSpan(options.tracer, c.req, route, arrival, c);
    c.set('span', span);
    let threw = true;
    try {
      await next();
      threw = false;
    } finally {
      const problem = !threw && takesTraceId(span, c.res.headers.get('content-type')) ? await c.res.text() : undefined;
      const answered = {
        requestId: c.get('requestId'),
        status: threw ? 500 : c.res.status,
        errorType: threw ? 'exception' : undefined,
        clientId: c.get('clientId'),
        lookup: c.get('lookup'),
      };
      const body = closeServerSpan(span, answered, problem);
      if (body !== undefined) c.res = new Response(body, c.res);
    }
  };
}
