// The admin routes' client authentication as Hono middleware: the registered client of a gateway token
// (auth/client-authenticator.ts), or the refusal as the app's problem+json answer. The searches identify their
// caller through the search use case.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { BEARER_REALM, unauthorized, verifyBearer } from '../auth/client-authenticator.js';
import type { GatewayTokens } from '../auth/gateway-tokens.js';

/** Requires a valid gateway token (RFC 6750) and records its client: the admin routes. */
export function bearerAuth(options: { gatewayTokens: GatewayTokens }): MiddlewareHandler<AppEnv> {
  return async function bearerAuth(c, next) {
    const header = c.req.header('authorization');
    const result = header
      ? await verifyBearer(options.gatewayTokens, header)
      : unauthorized(
          'A gateway access token is required: Authorization: Bearer <token> (POST /token/login).',
          BEARER_REALM,
        );
    if ('refused' in result) throw result.refused;
    c.set('clientId', result.clientId);
    await next();
  };
}
