// The client authentication of the JSON routes as Hono middleware: the registered client of a gateway token or of
// HTTP Basic credentials (auth/client-authenticator.ts), or the refusal as the app's problem+json answer.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';
import { BEARER_REALM, unauthorized, verifyBearer, type ClientAuthenticator } from '../auth/client-authenticator.js';
import type { GatewayTokens } from '../auth/gateway-tokens.js';

/** The caller's address of a request, as the failed-login throttle counts it (trusted-proxy aware). */
export type AddressOf = (c: Context<AppEnv>) => string | undefined;

/** Requires a registered client (Bearer or Basic) and records it. */
export function clientAuth(authenticate: ClientAuthenticator, addressOf: AddressOf): MiddlewareHandler<AppEnv> {
  return async function clientAuth(c, next) {
    const result = await authenticate(c.req.header('authorization'), () => addressOf(c));
    if ('refused' in result) throw result.refused;
    c.set('clientId', result.clientId);
    await next();
  };
}

/** Requires a valid gateway token (RFC 6750) and records its client: the admin routes. */
export function bearerAuth(options: { tokens: GatewayTokens }): MiddlewareHandler<AppEnv> {
  return async function bearerAuth(c, next) {
    const header = c.req.header('authorization');
    const result = header
      ? await verifyBearer(options.tokens, header)
      : unauthorized(
          'A gateway access token is required: Authorization: Bearer <token> (POST /token/login).',
          BEARER_REALM,
        );
    if ('refused' in result) throw result.refused;
    c.set('clientId', result.clientId);
    await next();
  };
}
