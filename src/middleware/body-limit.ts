// Bounds every request body (REQUEST_MAX_BODY_BYTES): only the login form takes one, and a few KiB hold it.
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from '../app-env.js';
import { problemResponse } from '../errors.js';

/**
 * Refuses a larger body with 413 as soon as the bound is passed: at once for a declared Content-Length,
 * after at most `maxBytes` for a chunked body, which is never held whole. `Connection: close` makes Node
 * drop the connection after the answer instead of reading the rest of an upload nobody wants.
 */
export function requestBodyLimit(
  maxBytes: number,
  ownBounds: ReadonlySet<string> = new Set(),
): MiddlewareHandler<AppEnv> {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      problemResponse('payload_too_large', `The request body may hold at most ${maxBytes} bytes.`, c.get('requestId'), {
        connection: 'close',
      }),
  });
  return async function requestBodyLimit(c, next) {
    // GET and HEAD carry no body the gateway reads; skipping them keeps the lazy Request of the Node adapter lazy.
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    // A route that takes a bigger body (the batch search) applies its own bound, the same way.
    if (ownBounds.has(c.req.path)) return next();
    return limit(c, next);
  };
}
