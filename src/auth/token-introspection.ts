// Token introspection (RFC 7662) at POST /oauth2/introspect, for admin clients: a service beside the gateway learns
// whether a gateway token is active, and whose it is, without holding the signing key. Client authentication as at
// the token endpoint; the route only words the answer.
import { authenticateEndpointClient, readOAuthForm, type OAuthRequest } from './endpoint-client-auth.js';
import { GATEWAY_SCOPE } from './gateway-tokens.js';
import type { RevocationServices } from './token-revocation.js';

/** RFC 7662's introspection endpoint (src/operations/oauth/oauth-route.ts). */
export const OAUTH_INTROSPECT_PATH = '/oauth2/introspect';

/** RFC 7662 section 2.2: `active` alone for a token that is not active, else what the gateway knows of it. */
export type Introspection =
  | { active: false }
  | {
      active: true;
      client_id: string;
      sub: string;
      scope: typeof GATEWAY_SCOPE;
      token_type: 'Bearer';
      exp: number;
      iat: number;
      jti: string;
      /** RFC 8705 section 3.2: the certificate a bound token is confirmed by. */
      cnf?: { 'x5t#S256': string };
    };

/**
 * Answers an introspection request: the caller must be an admin client (others are refused with
 * `unauthorized_client`). A token is active while it is ours, unexpired, unrevoked and its client registered.
 */
export async function introspectToken(
  services: Pick<
    RevocationServices,
    'clients' | 'loginThrottle' | 'logger' | 'gatewayTokens' | 'isAdmin' | 'clientCertificates'
  >,
  request: OAuthRequest,
): Promise<Introspection> {
  const form = await readOAuthForm(request);
  const clientId = await authenticateEndpointClient(services, request, form);
  if (!services.isAdmin(clientId)) {
    throw form.refuse('unauthorized_client', 'Only admin clients may introspect tokens.');
  }
  const token = form.field('token');
  // `token_type_hint` is read as a hint only (section 2.1): the gateway has access tokens alone.
  form.field('token_type_hint');
  if (!token) throw form.refuse('invalid_request', 'The field "token" is required.');
  const claims = await services.gatewayTokens.inspect(token);
  if (claims === null || !services.gatewayTokens.accepts(claims)) return { active: false };
  return {
    active: true,
    client_id: claims.clientId,
    sub: claims.clientId,
    scope: GATEWAY_SCOPE,
    token_type: 'Bearer',
    exp: Math.floor(claims.expiresAt / 1000),
    iat: Math.floor(claims.issuedAt / 1000),
    jti: claims.jti,
    ...(claims.x5tS256 === undefined ? {} : { cnf: { 'x5t#S256': claims.x5tS256 } }),
  };
}
