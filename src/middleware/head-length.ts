// A HEAD answer carries the Content-Length its GET would (RFC 9110 section 9.3.2): Hono answers HEAD with the GET
// route's answer without its body, and a runtime's adapter only sets a length where it writes a body.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';

export function headLength(): MiddlewareHandler<AppEnv> {
  return async function headLength(c, next) {
    await next();
    if (c.req.method !== 'HEAD' || c.res.body === null || c.res.headers.has('content-length')) return;
    const bytes = (await c.res.clone().arrayBuffer()).byteLength;
    c.res.headers.set('content-length', String(bytes));
  };
}
