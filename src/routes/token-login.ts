// POST /token/login: the upstream's own client-credentials endpoint, issuing gateway tokens to internal clients.
import { logLoginFailed } from '../auth/login-failure.js';
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { routeDocs } from '../docs/route-docs.js';
import { GATEWAY_SCOPE } from '../auth/gateway-tokens.js';
import { BASIC, decodeBasic } from '../auth/basic-credentials.js';
import { GatewayError } from '../errors.js';
import { clientAddress } from '../limits/client-address.js';
import type { Services } from '../services.js';

/** RFC 6749 section 5.2 with RFC 9110's challenge on a 401: the token endpoint takes client_secret_basic. */
export const TOKEN_ENDPOINT_CHALLENGE = 'Basic realm="callerid-gateway", charset="UTF-8"';

function oauthError(code: 'bad_request' | 'unauthorized', error: string, description: string): GatewayError {
  return new GatewayError(code, description, {
    extensions: { error, error_description: description },
    headers: code === 'unauthorized' ? { 'www-authenticate': TOKEN_ENDPOINT_CHALLENGE } : {},
  });
}

/**
 * Client credentials from `Authorization: Basic` (RFC 6749 section 2.3.1: id and secret each form-urlencoded, then
 * joined by a colon), or undefined when the header is absent. A header that is not readable Basic is a 401.
 */
function basicClient(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (header === undefined) return undefined;
  const encoded = BASIC.exec(header);
  const pair = encoded ? decodeBasic(encoded[1]!) : undefined;
  if (pair === undefined)
    throw oauthError(
      'unauthorized',
      'invalid_client',
      'Use Authorization: Basic <base64 of client-id:secret>, or the form fields.',
    );
  return { clientId: formDecoded(pair.id), clientSecret: formDecoded(pair.secret) };
}

function formDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

export function tokenLoginRoutes(
  services: Pick<Services, 'clients' | 'gatewayTokens' | 'loginThrottle' | 'peerAddress' | 'config' | 'logger'>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { logger } = services;

  app.post('/token/login', routeDocs.tokenLogin, async (c) => {
    const type = c.req.header('content-type') ?? '';
    if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
      throw oauthError('bad_request', 'invalid_request', 'The body must be application/x-www-form-urlencoded.');
    }
    // Read as bytes: the form is not text to workerd, which warns on .text() of a form body.
    const form = new URLSearchParams(new TextDecoder().decode(await c.req.arrayBuffer()));
    const field = (name: string) => {
      const values = form.getAll(name);
      if (values.length > 1)
        throw oauthError('bad_request', 'invalid_request', `The field "${name}" is given more than once.`);
      return values[0] ?? '';
    };
    const grantType = field('grant_type');
    const basic = basicClient(c.req.header('authorization'));
    if (basic !== undefined && (form.has('client_id') || form.has('client_secret'))) {
      // RFC 6749 section 2.3: a client uses one authentication method per request.
      throw oauthError(
        'bad_request',
        'invalid_request',
        'Send the client credentials either as HTTP Basic or as the form fields "client_id" and "client_secret", not both.',
      );
    }
    const clientId = basic?.clientId ?? field('client_id');
    const clientSecret = basic?.clientSecret ?? field('client_secret');
    if (!grantType) throw oauthError('bad_request', 'invalid_request', 'The field "grant_type" is required.');
    if (grantType !== 'client_credentials') {
      throw oauthError('bad_request', 'unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
    }
    if (!clientId || !clientSecret) {
      throw oauthError('bad_request', 'invalid_request', 'The fields "client_id" and "client_secret" are required.');
    }
    const address = clientAddress(
      services.peerAddress(c),
      c.req.header('x-forwarded-for'),
      services.config.trustProxyHops,
    );
    const attempt = await services.loginThrottle.begin(clientId, address);
    if (!attempt.allowed) {
      const seconds = String(attempt.retryAfterSeconds);
      throw new GatewayError('too_many_requests', `Too many failed logins; try again in ${seconds} s.`, {
        headers: attempt.headers,
        extensions: { error: 'temporarily_unavailable' },
      });
    }
    if (!(await services.clients.authenticate(clientId, clientSecret))) {
      logLoginFailed(logger, services.clients.has, clientId, basic === undefined ? 'form' : 'basic');
      throw oauthError('unauthorized', 'invalid_client', 'Unknown client or wrong secret.');
    }
    await attempt.succeeded();
    const issued = await services.gatewayTokens.issue(clientId);
    c.header('cache-control', 'no-store');
    return c.json({
      access_token: issued.accessToken,
      token_type: 'Bearer',
      expires_in: String(issued.expiresInSeconds),
      scope: [{ service: GATEWAY_SCOPE, permission: 'READ', orderId: null }],
      uniqueId: null,
      clientId,
    });
  });

  return app;
}
