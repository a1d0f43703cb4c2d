// Bounds every request body before any route, authentication included: REQUEST_MAX_BODY_BYTES, or a route's
// own larger bound (the batch search); a route that takes no body refused one already (request/request-rules.ts).
// A body nobody will read is never drained: the answer closes the connection. Every body is read through here, so a
// body that fails to arrive whole (the client closed its connection mid-way) is refused here, whatever the route.
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../http/app-env.js';
import { GatewayError, problemResponse } from '../base/errors.js';
import { tooLargeMessage, type BodyBoundOf } from '../request/request-rules.js';

/** A body is declared by Content-Length (non-zero) or by Transfer-Encoding. */
function declaresBody(headers: { get(name: string): string | null | undefined }): boolean {
  const length = headers.get('content-length');
  return (length != null && length !== '0') || headers.get('transfer-encoding') != null;
}

/** A body read that failed: the runtime's own refusal as it is, anything else the client's abort (499). */
function bodyFailure(cause: unknown): GatewayError {
  if (cause instanceof GatewayError) return cause;
  return new GatewayError(
    'client_closed_request',
    'The client closed its connection before its request body was whole.',
    {
      cause,
    },
  );
}

/**
 * The request with its body read through a stream that fails with {@link bodyFailure}: a route reading it gets a
 * refusal the app answers and counts as the client's, never an internal error.
 */
function withTypedBody(raw: Request): Request {
  const source = raw.body;
  if (source === null) return raw;
  const reader = source.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (cause) {
        controller.error(bodyFailure(cause));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  // `duplex` is the Fetch standard's word for a streamed request body; Node's Request requires it.
  return new Request(raw, { body, duplex: 'half' } as RequestInit);
}

/**
 * Refuses a larger body with 413 as soon as the bound is passed: at once for a declared Content-Length, after at
 * most the bound for a chunked body, which is never held whole. Any other early answer to a request that declared
 * a body (a 401 before the body was read, a 400) says `Connection: close`, so Node closes the connection instead
 * of reading the rest of an upload nobody wants.
 */
export function requestBodyLimit(boundOf: BodyBoundOf): MiddlewareHandler<AppEnv> {
  const limits = new Map<number, MiddlewareHandler<AppEnv>>();
  const limitOf = (maxBytes: number) => {
    let limit = limits.get(maxBytes);
    if (limit === undefined) {
      limit = bodyLimit({
        maxSize: maxBytes,
        onError: (c) =>
          problemResponse('payload_too_large', tooLargeMessage(maxBytes), c.get('requestId'), {
            connection: 'close',
          }),
      });
      limits.set(maxBytes, limit);
    }
    return limit;
  };
  return async function requestBodyLimit(c, next) {
    const { method } = c.req;
    // A route without a body reads none; skipping it keeps the lazy Request of the Node adapter lazy.
    if (method === 'GET' || method === 'HEAD' || !declaresBody(c.req.raw.headers)) return next();
    c.req.raw = withTypedBody(c.req.raw);
    const refused = await limitOf(boundOf(c.req.path))(c, next);
    if (refused instanceof Response) return refused;
    if (c.res.status >= 400) c.header('connection', 'close');
  };
}
