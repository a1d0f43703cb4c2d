// The request rules (request/request-rules.ts) as the app's first middleware after the request id and the access log:
// what the app is handed in process and on Workers meets the same rules as Node's listeners apply before the app.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { problemResponse } from '../base/errors.js';
import { requestRefusal, type RequestRules } from '../request/request-rules.js';

export function requestRules(
  rules: RequestRules,
  targetOf: ((c: Context) => string | undefined) | undefined,
): MiddlewareHandler<AppEnv> {
  return async function requestRules(c, next) {
    const refused = requestRefusal(
      {
        method: c.req.method,
        // The target as sent where the runtime still has it; else the path as the runtime resolved it.
        target: targetOf?.(c) ?? c.req.path,
        header: (name) => c.req.header(name),
        peerAddress: () => undefined,
      },
      rules,
    );
    if (refused === undefined) return next();
    c.res = problemResponse(refused.code, refused.message, c.get('requestId'), refused.headers);
  };
}
