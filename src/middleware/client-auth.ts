// Who a request is for. On the PBX-facing routes a registered client shows a gateway token (Bearer) or its id and
// secret as HTTP Basic credentials (a dialplan cannot log in first); the admin routes take a gateway token only.
// A refusal is a GatewayError for the route to render.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.js';
import { BASIC, type BasicCredentials } from '../auth/basic-credentials.js';
import { type GatewayTokens, bearerToken, isBearerScheme } from '../auth/gateway-tokens.js';
import { logLoginFailed } from '../auth/login-failure.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';

export type ClientAuthResult = { clientId: string } | { refused: GatewayError };

/** Decides who a request is for; never throws. */
export type ClientAuthenticator = (c: Context<AppEnv>) => Promise<ClientAuthResult>;

export interface ClientAuthOptions {
  tokens: GatewayTokens;
  basic: BasicCredentials;
  /** The caller's address as the failed-login throttle counts it (trusted-proxy aware). */
  addressOf: (c: Context<AppEnv>) => string | undefined;
  /** Failed Basic logins are logged as failed form logins are. */
  logger: Logger;
  isRegistered: (clientId: string) => boolean;
}

/** Both schemes are offered: a client without credentials learns it may use either. */
export const CLIENT_CHALLENGE = 'Bearer realm="callerid-gateway", Basic realm="callerid-gateway", charset="UTF-8"';

const BEARER_REALM = 'Bearer realm="callerid-gateway"';

const unauthorized = (detail: string, challenge = CLIENT_CHALLENGE): ClientAuthResult => ({
  refused: new GatewayError('unauthorized', detail, { headers: { 'www-authenticate': challenge } }),
});

/** The client of a Bearer header; the verification itself is cached by `tokens`. */
async function verifyBearer(tokens: GatewayTokens, header: string): Promise<ClientAuthResult> {
  const token = bearerToken(header);
  const verified = token === undefined ? null : await tokens.verify(token);
  if (verified) return { clientId: verified.clientId };
  return unauthorized('The access token is missing, invalid or expired.', `${BEARER_REALM}, error="invalid_token"`);
}

export function createClientAuthenticator(options: ClientAuthOptions): ClientAuthenticator {
  const { tokens, basic } = options;
  return async function authenticate(c) {
    const header = c.req.header('authorization');
    if (!header)
      return unauthorized(
        'Credentials are required: Authorization: Bearer <token> (POST /token/login), or Basic with the client id and secret.',
      );
    if (isBearerScheme(header)) return verifyBearer(tokens, header);
    const encoded = BASIC.exec(header);
    if (!encoded) return unauthorized('Use Authorization: Bearer <token> or Basic <base64 of client-id:secret>.');
    const verdict = await basic.verify(encoded[1]!, options.addressOf(c));
    if ('clientId' in verdict) return verdict;
    if (verdict.refused === 'throttled') {
      const seconds = String(verdict.retryAfterSeconds);
      return {
        refused: new GatewayError('too_many_requests', `Too many failed logins; try again in ${seconds} s.`, {
          headers: verdict.headers,
        }),
      };
    }
    logLoginFailed(options.logger, options.isRegistered, verdict.claimedId, 'basic');
    return unauthorized('Unknown client or wrong secret.');
  };
}

/** Middleware form for JSON routes: the refusal becomes the app's problem+json answer. */
export function clientAuth(authenticate: ClientAuthenticator): MiddlewareHandler<AppEnv> {
  return async function clientAuth(c, next) {
    const result = await authenticate(c);
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
