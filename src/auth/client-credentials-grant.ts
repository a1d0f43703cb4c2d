// The client-credentials grant behind both token endpoints (POST /token/login in the upstream's dialect, POST
// /oauth2/token in RFC 6749's): one reading of the form and the client's credentials (endpoint-client-auth.ts),
// one failed-login throttle, one log line per failure. Each endpoint only words the answer and the refusals.
import {
  endpointClient,
  readOAuthForm,
  type EndpointClientServices,
  type OAuthRequest,
} from './endpoint-client-auth.js';
import { GATEWAY_SCOPE, type GatewayTokens } from './gateway-tokens.js';
import { confirmationOf } from './certificates/token-binding.js';

/** The RFC 6749 token endpoint (src/operations/oauth/oauth-route.ts) and its RFC 8414 metadata. */
export const OAUTH_TOKEN_PATH = '/oauth2/token';
export const OAUTH_METADATA_PATH = '/.well-known/oauth-authorization-server';

export interface Granted {
  clientId: string;
  accessToken: string;
  expiresInSeconds: number;
  /** The one scope a gateway token carries. */
  scope: typeof GATEWAY_SCOPE;
}

export type GrantServices = EndpointClientServices & { gatewayTokens: GatewayTokens };

export interface GrantOptions {
  /**
   * Read the form's `scope` (RFC 6749 section 3.3): absent, empty or only the gateway's scope is granted, anything
   * else refused with `invalid_scope`. Off for the upstream's dialect, which never had the field and ignores it.
   */
  checkScope: boolean;
}

/** Runs the grant for a token request: the token issued, or an {@link OAuthRefusal}. */
export async function grantClientCredentials(
  services: GrantServices,
  request: OAuthRequest,
  options: GrantOptions,
): Promise<Granted> {
  const form = await readOAuthForm(request);
  const grantType = form.field('grant_type');
  if (!grantType) throw form.refuse('invalid_request', 'The field "grant_type" is required.');
  if (grantType !== 'client_credentials') {
    throw form.refuse('unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  }
  // RFC 6749 section 3.3: space-delimited; the value is not echoed (it could be anything the caller typed).
  if (
    options.checkScope &&
    form
      .field('scope')
      .split(' ')
      .some((scope) => scope !== '' && scope !== GATEWAY_SCOPE)
  ) {
    throw form.refuse('invalid_scope', `The only scope this gateway grants is ${GATEWAY_SCOPE}.`);
  }
  const { clientId, certificate } = await endpointClient(services, request, form);
  // Issued over mutual TLS to the client the certificate is: bound to it (RFC 8705 section 3).
  const issued = await services.gatewayTokens.issue(clientId, certificate && confirmationOf(certificate));
  return { clientId, accessToken: issued.accessToken, expiresInSeconds: issued.expiresInSeconds, scope: GATEWAY_SCOPE };
}
