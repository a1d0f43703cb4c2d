// Requires a valid gateway token (RFC 6750) and records its client; the verification itself is cached.
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';
import type { GatewayTokens } from '../auth/gateway-tokens.js';
import { bearerToken } from '../auth/bearer.js';
import { GatewayError } from '../errors.js';

const REALM = 'Bearer realm="callerid-gateway"';

export function bearerAuth(options: { tokens: GatewayTokens }): MiddlewareHandler<AppEnv> {
  return async function bearerAuth(c, next) {
    const header = c.req.header('authorization');
    if (!header) {
      throw new GatewayError(
        'unauthorized',
        'A gateway access token is required: Authorization: Bearer <token> (POST /token/login).',
        {
          headers: { 'www-authenticate': REALM },
        },
      );
    }
    const token = bearerToken(header);
    const verified = token === undefined ? null : await options.tokens.verify(token);
    if (!verified) {
      throw new GatewayError('unauthorized', 'The access token is missing, invalid or expired.', {
        headers: { 'www-authenticate': `${REALM}, error="invalid_token"` },
      });
    }
    c.set('clientId', verified.clientId);
    await next();
  };
}
