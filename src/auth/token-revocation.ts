// Revoking gateway tokens: one token at POST /oauth2/revoke (RFC 7009; a client its own, an admin client any), or
// every token issued to a client before now (POST /admin/tokens/revoke-client). Both go through the deployment's
// revocations (auth/revocations.ts), so every replica refuses the token; the routes only word the answers.
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import {
  authenticateEndpointClient,
  readOAuthForm,
  type EndpointClientServices,
  type OAuthRequest,
} from './endpoint-client-auth.js';
import type { GatewayTokens } from './gateway-tokens.js';
import type { Revocations } from './revocations.js';

/** RFC 7009's revocation endpoint (src/routes/oauth-server.ts). */
export const OAUTH_REVOKE_PATH = '/oauth2/revoke';

export type RevocationServices = EndpointClientServices & {
  gatewayTokens: GatewayTokens;
  revocations: Revocations;
  /** Whether a client may revoke and inspect any client's tokens (GATEWAY_ADMIN_CLIENTS, the clients file). */
  isAdmin: (clientId: string) => boolean;
  logger: Logger;
};

/**
 * Handles a revocation request (RFC 7009 section 2.1): the client authenticated as at the token endpoint, then the
 * token revoked if it is one of ours that has not expired. A token that is not (already expired, made up) needs no
 * revoking and is answered alike (section 2.2). `shared` is false when only this process took the revocation.
 */
export async function revokeToken(services: RevocationServices, request: OAuthRequest): Promise<{ shared: boolean }> {
  const form = await readOAuthForm(request);
  const clientId = await authenticateEndpointClient(services, request, form);
  const token = form.field('token');
  // `token_type_hint` is read as a hint only (section 2.1): the gateway has access tokens alone.
  form.field('token_type_hint');
  if (!token) throw form.refuse('invalid_request', 'The field "token" is required.');
  const claims = await services.gatewayTokens.inspect(token);
  if (claims === null) return { shared: true };
  if (claims.clientId !== clientId && !services.isAdmin(clientId)) {
    throw form.refuse('unauthorized_client', 'This client may revoke only the tokens issued to it.');
  }
  const shared = await services.revocations.revoke({ kind: 'token', jti: claims.jti, until: claims.expiresAt });
  services.logger.info(
    { event: 'token_revoked', clientId, owner: claims.clientId, jti: claims.jti, shared },
    'gateway token revoked',
  );
  return { shared };
}

/**
 * Revokes every token issued to `clientId` up to now: kept as long as a token issued just before could live
 * (`maxTtlSeconds`, the longest lifetime any client's tokens have).
 */
export async function revokeClientTokens(
  services: Pick<RevocationServices, 'revocations' | 'logger'> & { clock: Clock },
  by: string,
  clientId: string,
  maxTtlSeconds: number,
): Promise<{ before: number; shared: boolean }> {
  const before = services.clock();
  const shared = await services.revocations.revoke({
    kind: 'client',
    clientId,
    before,
    until: before + maxTtlSeconds * 1000,
  });
  services.logger.info(
    { event: 'client_tokens_revoked', clientId: by, owner: clientId, before: new Date(before).toISOString(), shared },
    'every token issued to the client so far revoked',
  );
  return { before, shared };
}
