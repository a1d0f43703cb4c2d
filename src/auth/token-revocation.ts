// Revoking gateway tokens: one token at POST /oauth2/revoke (RFC 7009; a client its own, an admin client any), or
// every token issued to a client up to now (POST /admin/tokens/revoke-client). Both go through the deployment's
// revocations (auth/revocations.ts), so every replica refuses the token; the routes only word the answers.
import type { Clock } from '../base/clock.js';
import type { Logger } from '../observability/logger.js';
import {
  authenticateEndpointClient,
  readOAuthForm,
  type EndpointClientServices,
  type OAuthRequest,
} from './endpoint-client-auth.js';
import type { GatewayTokens } from './gateway-tokens.js';
import type { Revocations } from './revocations.js';

/** RFC 7009's revocation endpoint (src/operations/oauth/oauth-route.ts). */
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
  // Another client's token is answered as one that is not ours (section 2.2: no oracle), and stays valid.
  if (claims.clientId !== clientId && !services.isAdmin(clientId)) {
    services.logger.info({ event: 'token_revoke_ignored', clientId }, "another client's token is not revoked");
    return { shared: true };
  }
  const { jti, issuedAt, expiresAt } = claims;
  const revocation = { kind: 'token', jti, clientId: claims.clientId, issuedAt, until: expiresAt } as const;
  const shared = await services.revocations.revoke(revocation);
  services.logger.info(
    { event: 'token_revoked', clientId, owner: claims.clientId, jti: claims.jti, shared },
    'gateway token revoked',
  );
  return { shared };
}

/**
 * Revokes every token issued to `clientId` up to and including now: kept as long as a token issued just before could
 * live (`maxTtlSeconds`, the longest lifetime any client's tokens have). Answers only once the clock has passed the
 * cut, so a token issued after the answer is never in it.
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
  if (services.clock() <= before) await new Promise((resolve) => setTimeout(resolve, 1));
  services.logger.info(
    { event: 'client_tokens_revoked', clientId: by, owner: clientId, before: new Date(before).toISOString(), shared },
    'every token issued to the client so far revoked',
  );
  return { before, shared };
}
