// POST /oauth2/token (RFC 6749's answer to the same client-credentials grant as POST /token/login) and its RFC 8414
// metadata at /.well-known/oauth-authorization-server, so a new app logs in with a standard OAuth library.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../app-env.js';
import {
  grantClientCredentials,
  OAUTH_METADATA_PATH,
  OAUTH_TOKEN_PATH,
  type GrantServices,
} from '../auth/client-credentials-grant.js';
import { OAuthRefusal, TOKEN_ENDPOINT_CHALLENGE } from '../auth/endpoint-client-auth.js';
import { GATEWAY_SCOPE } from '../auth/gateway-tokens.js';
import { DOCS_PATH } from '../docs/docs-page.js';
import { routeDocs } from '../docs/route-docs.js';
import type { Services } from '../services.js';
import { grantRequestOf } from './token-login.js';

/** RFC 6749 sections 5.1 and 5.2: no cache may keep a token answer, or a refusal of one. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** The status RFC 6749 section 5.2 gives a refusal: 401 and a challenge only where the client used HTTP Basic. */
function refusalStatus(refusal: OAuthRefusal): 400 | 401 | 429 {
  if (refusal.error === 'temporarily_unavailable') return 429;
  return refusal.error === 'invalid_client' && refusal.viaBasic ? 401 : 400;
}

/** The gateway's public base URL: PUBLIC_BASE_URL, else the origin this request came to. */
function issuerOf(c: Context<AppEnv>, publicBaseUrl: string | undefined): string {
  return publicBaseUrl ?? new URL(c.req.url).origin;
}

export function oauthServerRoutes(
  services: GrantServices & Pick<Services, 'docsAssets' | 'config' | 'addressOf'>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { config } = services;
  // Swagger UI's page only where this runtime serves it (Node; Workers answer 404 for /docs).
  const documented = config.docs.enabled && services.docsAssets !== undefined;

  app.get(OAUTH_METADATA_PATH, routeDocs.oauthMetadata, (c) => {
    const issuer = issuerOf(c, config.publicBaseUrl);
    return c.json(
      {
        issuer,
        token_endpoint: `${issuer}${OAUTH_TOKEN_PATH}`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        scopes_supported: [GATEWAY_SCOPE],
        // REQUIRED by RFC 8414 section 2; there is no authorization endpoint, so no response type is supported.
        response_types_supported: [],
        ...(documented ? { service_documentation: `${issuer}${DOCS_PATH}` } : {}),
      },
      200,
      { 'cache-control': 'public, max-age=3600' },
    );
  });

  app.post(OAUTH_TOKEN_PATH, routeDocs.oauthToken, async (c) => {
    let granted;
    try {
      granted = await grantClientCredentials(services, grantRequestOf(c, services.addressOf), { checkScope: true });
    } catch (err) {
      if (!(err instanceof OAuthRefusal)) throw err;
      const status = refusalStatus(err);
      return c.json({ error: err.error, error_description: err.message }, status, {
        ...err.headers,
        ...NO_STORE,
        ...(status === 401 ? { 'www-authenticate': TOKEN_ENDPOINT_CHALLENGE } : {}),
      });
    }
    return c.json(
      {
        access_token: granted.accessToken,
        token_type: 'Bearer',
        expires_in: granted.expiresInSeconds,
        scope: granted.scope,
      },
      200,
      NO_STORE,
    );
  });

  return app;
}
