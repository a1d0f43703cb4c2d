// The gateway's OAuth endpoints: POST /oauth2/token (RFC 6749's answer to the same grant as POST /token/login),
// POST /oauth2/revoke (RFC 7009), POST /oauth2/introspect (RFC 7662), their RFC 8414 metadata at /.well-known/oauth-authorization-server, so a new app
// logs in with a standard OAuth library, and the admin routes over gateway tokens.
import { Hono, type Context } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import {
  grantClientCredentials,
  OAUTH_METADATA_PATH,
  OAUTH_TOKEN_PATH,
  type GrantServices,
} from '../../auth/client-credentials-grant.js';
import { CLIENT_AUTH_METHODS, OAuthRefusal, TOKEN_ENDPOINT_CHALLENGE } from '../../auth/endpoint-client-auth.js';
import { OAUTH_REVOKE_PATH, revokeToken } from '../../auth/token-revocation.js';
import { introspectToken, OAUTH_INTROSPECT_PATH } from '../../auth/token-introspection.js';
import { adminTokenRoutes } from '../admin/admin-tokens-route.js';
import { GATEWAY_SCOPE } from '../../auth/gateway-tokens.js';
import { DOCS_PATH } from '../../docs/docs-page.js';
import { oauthDocs } from './oauth-docs.js';
import type { Services } from '../../services/services.js';
import { grantRequestOf } from '../token-login/token-login-route.js';

/** RFC 6749 sections 5.1 and 5.2: no cache may keep a token answer, or a refusal of one. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

/** The status RFC 6749 section 5.2 gives a refusal: 401 and a challenge only where the client used HTTP Basic. */
function refusalStatus(refusal: OAuthRefusal): 400 | 401 | 429 {
  if (refusal.error === 'temporarily_unavailable') return 429;
  return refusal.error === 'invalid_client' && refusal.viaBasic ? 401 : 400;
}

/** RFC 3986's host (a name, IPv4 or bracketed IPv6) and an optional port, as X-Forwarded-Host carries it. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/;

/**
 * The origin a request came to, as the outermost trusted proxy (TRUST_PROXY_HOPS) saw it: X-Forwarded-Proto and
 * X-Forwarded-Host only from a trusted hop and only when they make an http(s) origin, else the request's own URL.
 */
function requestOrigin(c: Context<AppEnv>, forwardedEntry: Services['forwardedEntry']): string {
  const own = new URL(c.req.url);
  const proto = forwardedEntry(c.req.header('x-forwarded-proto'))?.toLowerCase();
  const forwardedHost = forwardedEntry(c.req.header('x-forwarded-host'));
  const scheme = proto === 'http' || proto === 'https' ? proto : own.protocol.slice(0, -1);
  // A forwarded host with a path, credentials or stray characters is no host: the request's own stands.
  const host = forwardedHost !== undefined && HOST.test(forwardedHost) ? forwardedHost : own.host;
  const origin = `${scheme}://${host}`;
  return URL.canParse(origin) ? new URL(origin).origin : own.origin;
}

/**
 * The issuer (RFC 8414 section 2) and whether a shared cache may keep an answer naming it: PUBLIC_BASE_URL, the
 * same for every request, or (demo and development set-ups only; production requires PUBLIC_BASE_URL) the origin
 * this request came to, which no cache may keep for another request.
 */
function issuerOf(
  c: Context<AppEnv>,
  services: Pick<Services, 'config' | 'forwardedEntry'>,
): { issuer: string; shared: boolean } {
  const { publicBaseUrl } = services.config;
  if (publicBaseUrl !== undefined) return { issuer: publicBaseUrl, shared: true };
  return { issuer: requestOrigin(c, services.forwardedEntry), shared: false };
}

/** An OAuth endpoint's answer, or its refusal as RFC 6749 section 5.2 words it. */
async function answering(c: Context<AppEnv>, handle: () => Promise<Response>): Promise<Response> {
  try {
    return await handle();
  } catch (err) {
    if (!(err instanceof OAuthRefusal)) throw err;
    const status = refusalStatus(err);
    return c.json({ error: err.error, error_description: err.message }, status, {
      ...err.headers,
      ...NO_STORE,
      ...(status === 401 ? { 'www-authenticate': TOKEN_ENDPOINT_CHALLENGE } : {}),
    });
  }
}

export function oauthServerRoutes(
  services: GrantServices &
    Pick<
      Services,
      'docsAssets' | 'config' | 'addressOf' | 'forwardedEntry' | 'revocations' | 'clock' | 'clientCertificates'
    >,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { config } = services;
  const revocationServices = { ...services, isAdmin: services.clients.isAdmin };
  // Swagger UI's page only where this runtime serves it (Node; Workers answer 404 for /docs).
  const documented = config.docs.enabled && services.docsAssets !== undefined;
  // RFC 8705's method and bound tokens only where the runtime reads client certificates.
  const mtls = services.clientCertificates.enabled;
  const methods = CLIENT_AUTH_METHODS.filter((method) => mtls || method !== 'tls_client_auth');

  app.get(OAUTH_METADATA_PATH, oauthDocs.oauthMetadata, (c) => {
    const { issuer, shared } = issuerOf(c, services);
    return c.json(
      {
        issuer,
        token_endpoint: `${issuer}${OAUTH_TOKEN_PATH}`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: methods,
        revocation_endpoint: `${issuer}${OAUTH_REVOKE_PATH}`,
        revocation_endpoint_auth_methods_supported: methods,
        introspection_endpoint: `${issuer}${OAUTH_INTROSPECT_PATH}`,
        introspection_endpoint_auth_methods_supported: methods,
        scopes_supported: [GATEWAY_SCOPE],
        // RFC 8705 section 3.3: tokens issued to a client authenticated by its certificate are bound to it.
        ...(mtls ? { tls_client_certificate_bound_access_tokens: true } : {}),
        // REQUIRED by RFC 8414 section 2; there is no authorization endpoint, so no response type is supported.
        response_types_supported: [],
        ...(documented ? { service_documentation: `${issuer}${DOCS_PATH}` } : {}),
      },
      200,
      { 'cache-control': shared ? 'public, max-age=3600' : 'no-store' },
    );
  });

  app.post(OAUTH_TOKEN_PATH, oauthDocs.oauthToken, (c) =>
    answering(c, async () => {
      const request = grantRequestOf(c, services);
      const granted = await grantClientCredentials(services, request, { checkScope: true });
      const { accessToken, expiresInSeconds, scope } = granted;
      const body = { access_token: accessToken, token_type: 'Bearer', expires_in: expiresInSeconds, scope };
      return c.json(body, 200, NO_STORE);
    }),
  );

  app.post(OAUTH_REVOKE_PATH, oauthDocs.oauthRevoke, (c) =>
    answering(c, async () => {
      const { shared } = await revokeToken(revocationServices, grantRequestOf(c, services));
      // RFC 7009 section 2.2.1: 503 with Retry-After when the revocation could not be completed for the deployment.
      if (!shared) {
        const error = 'temporarily_unavailable';
        const description =
          'Revoked on this replica, which pushes the revocation to the shared store until it answers. Retry the revocation.';
        return c.json({ error, error_description: description }, 503, { ...NO_STORE, 'retry-after': '1' });
      }
      return c.body(null, 200, NO_STORE);
    }),
  );

  app.post(OAUTH_INTROSPECT_PATH, oauthDocs.oauthIntrospect, (c) =>
    answering(c, async () =>
      c.json(await introspectToken(revocationServices, grantRequestOf(c, services)), 200, NO_STORE),
    ),
  );

  app.route('/', adminTokenRoutes(services));

  return app;
}
