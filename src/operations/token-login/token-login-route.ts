// POST /token/login: the upstream's own client-credentials endpoint, issuing gateway tokens to internal clients in
// the upstream's response shape (the grant itself: src/auth/client-credentials-grant.ts).
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { grantClientCredentials, type GrantServices } from '../../auth/client-credentials-grant.js';
import { OAuthRefusal, TOKEN_ENDPOINT_CHALLENGE, type OAuthRequest } from '../../auth/endpoint-client-auth.js';
import { tokenLoginDocs } from './token-login-docs.js';
import { GatewayError } from '../../base/errors.js';
import type { Services } from '../../services/services.js';

/** A refused grant as this endpoint has always answered it: a problem with RFC 6749's `error` members inside. */
function loginProblem(refusal: OAuthRefusal): GatewayError {
  const extensions = { error: refusal.error, error_description: refusal.message };
  if (refusal.error === 'temporarily_unavailable')
    return new GatewayError('too_many_requests', refusal.message, { headers: refusal.headers, extensions });
  if (refusal.error === 'invalid_client')
    return new GatewayError('unauthorized', refusal.message, {
      headers: { 'www-authenticate': TOKEN_ENDPOINT_CHALLENGE },
      extensions,
    });
  return new GatewayError('bad_request', refusal.message, { extensions });
}

/** An OAuth endpoint's request parts as the grant, revocation and introspection read them. */
export function grantRequestOf(
  c: Context<AppEnv>,
  services: Pick<Services, 'addressOf' | 'clientCertificates'>,
): OAuthRequest {
  return {
    contentType: c.req.header('content-type'),
    authorization: c.req.header('authorization'),
    body: () => c.req.arrayBuffer(),
    address: () => services.addressOf(c),
    peerCertificate: () => services.clientCertificates.of(c),
  };
}

export function tokenLoginRoutes(
  services: GrantServices & Pick<Services, 'addressOf' | 'clientCertificates'>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post('/token/login', tokenLoginDocs.tokenLogin, async (c) => {
    const granted = await grantClientCredentials(services, grantRequestOf(c, services), {
      checkScope: false,
    }).catch((err: unknown) => {
      throw err instanceof OAuthRefusal ? loginProblem(err) : err;
    });
    c.header('cache-control', 'no-store');
    return c.json({
      access_token: granted.accessToken,
      token_type: 'Bearer',
      expires_in: String(granted.expiresInSeconds),
      scope: [{ service: granted.scope, permission: 'READ', orderId: null }],
      uniqueId: null,
      clientId: granted.clientId,
    });
  });

  return app;
}
