// The OpenAPI description of the OAuth endpoints (token, revocation, introspection, the server's metadata) (hono-openapi middlewares the route puts first in its handler list).
import type { MiddlewareHandler } from 'hono';
import { problemResponses } from '../../docs/problem-responses.js';
import { ref } from '../../docs/openapi-schemas.js';
import {
  json,
  header,
  ANONYMOUS,
  NO_STORE_HEADERS,
  route,
  MALFORMED_REQUEST,
  OAUTH_CLIENT_REFUSALS,
} from '../../docs/route-docs.js';

export const oauthDocs = {
  oauthToken: route({
    tags: ['Token'],
    summary: 'Obtain a gateway token, OAuth 2.0 style (RFC 6749)',
    description:
      'The same gateway token as `POST /token/login`, under the same client checks and failed-login limits, answered as RFC 6749 has it ' +
      '(`expires_in` a number, `scope` a string), so standard OAuth libraries (oauth4webapi, openid-client) log in with it; they find it from ' +
      '`/.well-known/oauth-authorization-server`. Client authentication `client_secret_basic` (HTTP Basic) or `client_secret_post` (the form fields); where the gateway reads client certificates, also `tls_client_auth` (RFC 8705: `client_id` in the form, the certificate instead of a secret), and the token is then bound to that certificate (`cnf.x5t#S256`): it is refused over a connection without it.',
    operationId: 'oauthToken',
    security: [{}, { clientBasic: [] }],
    requestBody: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: ref('OAuthTokenRequest') } },
    },
    responses: {
      200: {
        description: 'A gateway token (RFC 6749 section 5.1).',
        headers: NO_STORE_HEADERS,
        content: json(ref('OAuthTokenResponse')),
      },
      400: {
        description:
          '`invalid_request`, `unsupported_grant_type`, `invalid_scope`; `invalid_client` for a wrong secret or unknown client sent as form fields.',
        headers: NO_STORE_HEADERS,
        content: json(ref('OAuthError')),
      },
      ...OAUTH_CLIENT_REFUSALS,
      ...problemResponses('payload_too_large'),
    },
  }),

  oauthRevoke: route({
    tags: ['Token'],
    summary: 'Revoke a gateway token (RFC 7009)',
    description:
      'Client authentication as at `POST /oauth2/token`. A client revokes the tokens issued to it; an admin client (GATEWAY_ADMIN_CLIENTS) any. ' +
      "Every replica refuses the token within a second (Redis, the Durable Object). A token that is not one of ours, expired, or (for a client that is not an admin) another client's, is answered 200 alike and not revoked (section 2.2).",
    operationId: 'oauthRevoke',
    security: [{}, { clientBasic: [] }],
    requestBody: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: ref('OAuthRevocationRequest') } },
    },
    responses: {
      200: { description: 'Revoked, or nothing to revoke; no body.', headers: NO_STORE_HEADERS },
      400: {
        description: '`invalid_request` (no `token`, not form-encoded), `invalid_client` for wrong form credentials.',
        headers: NO_STORE_HEADERS,
        content: json(ref('OAuthError')),
      },
      ...OAUTH_CLIENT_REFUSALS,
      503: {
        description:
          '`temporarily_unavailable`: revoked on this replica, which pushes the revocation to the shared store until it answers; retry (section 2.2.1).',
        headers: { ...NO_STORE_HEADERS, 'Retry-After': header('`1`.') },
        content: json(ref('OAuthError')),
      },
      ...problemResponses('payload_too_large'),
    },
  }),

  oauthIntrospect: route({
    tags: ['Token'],
    summary: 'Introspect a gateway token (RFC 7662)',
    description:
      'For admin clients (GATEWAY_ADMIN_CLIENTS, or `admin` in the clients file), authenticated as at `POST /oauth2/token`: whether a token is active ' +
      '(ours, unexpired, unrevoked, its client registered) and whose it is, without the signing key.',
    operationId: 'oauthIntrospect',
    security: [{}, { clientBasic: [] }],
    requestBody: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: ref('OAuthRevocationRequest') } },
    },
    responses: {
      200: { description: 'RFC 7662 section 2.2.', headers: NO_STORE_HEADERS, content: json(ref('Introspection')) },
      400: {
        description:
          '`invalid_request` (no `token`, not form-encoded), `unauthorized_client` (not an admin client), `invalid_client` for wrong form credentials.',
        headers: NO_STORE_HEADERS,
        content: json(ref('OAuthError')),
      },
      ...OAUTH_CLIENT_REFUSALS,
      ...problemResponses('payload_too_large'),
    },
  }),

  oauthMetadata: route({
    tags: ['Token'],
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    description:
      'Where a standard OAuth library finds the token endpoint and what it accepts, from the base URL alone. `issuer` is PUBLIC_BASE_URL (required in production), whatever `Host` the request names; only without it (development) the origin the request came to.',
    operationId: 'oauthMetadata',
    security: ANONYMOUS,
    responses: {
      200: {
        description: 'The metadata.',
        headers: {
          'Cache-Control': header(
            '`public, max-age=3600` with PUBLIC_BASE_URL; `no-store` when the issuer came from the request.',
          ),
        },
        content: json(ref('AuthorizationServerMetadata')),
      },
      ...MALFORMED_REQUEST,
      ...problemResponses(),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
