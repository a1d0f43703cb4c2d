// The OpenAPI description of every route, as hono-openapi middlewares the routes put first in their handler
// list: the document at /openapi.json is generated from the routes the app really registers (a route without
// one of these is missing from it, and a test says so), with parameters, answers and problems per route.
import { describeRoute } from 'hono-openapi';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { MiddlewareHandler } from 'hono';
import { GATEWAY_SCOPE } from '../auth/gateway-tokens.js';
import { problemResponses } from './problem-responses.js';
import { ref } from './openapi-schemas.js';

const json = (schema: OpenAPIV3_1.SchemaObject | OpenAPIV3_1.ReferenceObject) => ({ 'application/json': { schema } });
const header = (description: string): OpenAPIV3_1.HeaderObject => ({ description, schema: { type: 'string' } });

/** A gateway token, pasted in or obtained by Swagger UI's client-credentials login (the same token either way). */
const GATEWAY_TOKEN: OpenAPIV3_1.SecurityRequirementObject[] = [
  { gatewayToken: [] },
  { oauthClientCredentials: [GATEWAY_SCOPE] },
];
/** The search routes also take a registered client's id and secret as HTTP Basic (a dialplan cannot log in first). */
const CLIENT: OpenAPIV3_1.SecurityRequirementObject[] = [...GATEWAY_TOKEN, { clientBasic: [] }];
const ANONYMOUS: OpenAPIV3_1.SecurityRequirementObject[] = [];

// draft-ietf-httpapi-ratelimit-headers-11; RATELIMIT_HEADERS=draft-6 or both sends the older trio instead or as well.
const RATE_LIMIT_HEADERS = {
  RateLimit: header(
    'The policy nearest to refusal: `r` requests remaining, `t` seconds until its window starts afresh, e.g. `"client";r=598;t=42`.',
  ),
  'RateLimit-Policy': header(
    'The policies that apply: `q` requests per `w` seconds, e.g. `"client";q=600;w=60` (with RATELIMIT_HEADERS=draft-6: `600;w=60`).',
  ),
  'RateLimit-Limit': header('With RATELIMIT_HEADERS=draft-6 or both: searches allowed in the current window.'),
  'RateLimit-Remaining': header('With RATELIMIT_HEADERS=draft-6 or both: searches left in the current window.'),
  'RateLimit-Reset': header('With RATELIMIT_HEADERS=draft-6 or both: seconds until the window resets.'),
};

const SEARCH_HEADERS = {
  'Cache-Control': header('`private, no-store`: contact data is personal.'),
  'Cache-Status': header(
    'RFC 9211: what the cache did, e.g. `callerid-gateway; hit; ttl=86280` or `callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=86400`.',
  ),
  Age: header('Seconds since the upstream gave this answer.'),
  ...RATE_LIMIT_HEADERS,
};

/** RFC 6749 sections 5.1 and 5.2: a token answer, or a refusal of one, is never cached. */
const NO_STORE_HEADERS = { 'Cache-Control': header('`no-store`.'), Pragma: header('`no-cache`.') };

const WHAT: OpenAPIV3_1.ParameterObject = {
  name: 'what',
  in: 'query',
  required: true,
  description:
    'The telephone number in any usual spelling (`+44 20 7946 0001`, `0044 20 7946 0001`, `020 7946 0001` with DEFAULT_REGION=GB); normalised to E.164. Give it once.',
  schema: { type: 'string', minLength: 1 },
  examples: { international: { value: '+44 20 7946 0001' }, national: { value: '020 7946 0001' } },
};

const PREFER: OpenAPIV3_1.ParameterObject = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    'RFC 7240 `wait=N` (seconds, decimals allowed): answer by then, with a stale entry or 504 `deadline-exceeded` if nothing fresh ' +
    'came in time; the upstream call goes on and fills the cache. Bounded by UPSTREAM_TIMEOUT_MS; without it a search waits that long (the CNAM route: CNAM_DEADLINE_MS).',
  schema: { type: 'string' },
  examples: { ring: { value: 'wait=0.8' } },
};

const PREFERENCE_APPLIED = {
  'Preference-Applied': header("`wait=N` when the caller's wait was honoured, with the value used."),
};

/** Refusals of a search that would need the paid upstream, and its failures. */
const UPSTREAM_PROBLEMS = [
  'quota_exhausted',
  'upstream_error',
  'budget_exhausted',
  'upstream_rate_limited',
  'upstream_unavailable',
  'upstream_busy',
  'token_unavailable',
  'unavailable',
  'upstream_timeout',
  'deadline_exceeded',
] as const;

const route = (spec: Parameters<typeof describeRoute>[0]): MiddlewareHandler => describeRoute(spec);

/** What any route may meet before the gateway sees the request: Node's own 400 and 431 (plain text). */
const MALFORMED_REQUEST = {
  '4XX': {
    description:
      'A malformed request (400) or request headers over 16 KiB (431), answered by the HTTP server before the gateway sees the request.',
  },
};

/** The refusals of client authentication at every OAuth endpoint (token, revocation, introspection). */
const OAUTH_CLIENT_REFUSALS = {
  401: {
    description: '`invalid_client`: wrong or unreadable credentials sent as HTTP Basic.',
    headers: {
      ...NO_STORE_HEADERS,
      'WWW-Authenticate': header('`Basic realm="callerid-gateway", charset="UTF-8"`.'),
    },
    content: json(ref('OAuthError')),
  },
  429: {
    description:
      '`temporarily_unavailable`: too many failed logins for this client id or from this address (LOGIN_FAILURES_*), also for the right secret until the window ends.',
    headers: {
      ...NO_STORE_HEADERS,
      'Retry-After': header('Seconds until the window that refused ends.'),
      RateLimit: RATE_LIMIT_HEADERS.RateLimit,
      'RateLimit-Policy': RATE_LIMIT_HEADERS['RateLimit-Policy'],
    },
    content: json(ref('OAuthError')),
  },
} as const;

export const routeDocs = {
  healthz: route({
    tags: ['Operations'],
    summary: 'Liveness: the process answers',
    description:
      'Answers 200 as long as the process serves requests; it asks nothing of the upstream or the shared stores. For a container or orchestrator liveness probe.',
    operationId: 'healthz',
    security: ANONYMOUS,
    responses: {
      200: { description: 'Alive.', content: json(ref('Health')) },
      ...MALFORMED_REQUEST,
      ...problemResponses(),
    },
  }),

  readyz: route({
    tags: ['Operations'],
    summary: "Readiness: the deployment's revocations are read and an upstream token is held or can be obtained now",
    description:
      "Answers 200 once the gateway has read the deployment's revoked tokens and while it holds an upstream token or can obtain one now, 503 with the reason otherwise; for a load balancer or readiness probe.",
    operationId: 'readyz',
    security: ANONYMOUS,
    responses: {
      200: { description: 'Ready to serve searches.', content: json(ref('Ready')) },
      ...MALFORMED_REQUEST,
      ...problemResponses('unavailable'),
    },
  }),

  metrics: route({
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description:
      'The Prometheus text format, or OpenMetrics 1.0.0 when `Accept` prefers `application/openmetrics-text` (as Prometheus asks): on Node its request-duration buckets then carry the trace and span ids of recorded requests as exemplars. On Node served on its own listener (METRICS_PORT, default 9464); on the API port only with METRICS_TOKEN set (then it needs `Authorization: Bearer <METRICS_TOKEN>`) or METRICS_PORT=0.',
    operationId: 'metrics',
    security: [{}, { metricsToken: [] }],
    responses: {
      200: {
        description: 'The metrics of this process.',
        content: {
          'text/plain': { schema: { type: 'string' } },
          'application/openmetrics-text': { schema: { type: 'string' } },
        },
      },
      ...problemResponses('unauthorized'),
    },
  }),

  tokenLogin: route({
    tags: ['Token'],
    summary: 'Obtain a gateway token (client-credentials grant)',
    description:
      "The upstream's own token endpoint, answered by the gateway for the clients in GATEWAY_CLIENTS: an existing client only changes its base URL. The client id and secret come as the form fields `client_id` and `client_secret` (as the upstream has them), or as HTTP Basic (`client_secret_basic`, RFC 6749 section 2.3.1), never both.",
    operationId: 'tokenLogin',
    // The form fields need no Authorization header; HTTP Basic is the other way to send the same credentials.
    security: [{}, { clientBasic: [] }],
    requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: ref('TokenRequest') } } },
    responses: {
      200: {
        description: "A gateway token in the upstream's response shape.",
        headers: { 'Cache-Control': header('`no-store`.') },
        content: json(ref('TokenResponse')),
      },
      ...problemResponses('bad_request', 'unauthorized', 'payload_too_large', 'too_many_requests'),
    },
  }),

  oauthToken: route({
    tags: ['Token'],
    summary: 'Obtain a gateway token, OAuth 2.0 style (RFC 6749)',
    description:
      'The same gateway token as `POST /token/login`, under the same client checks and failed-login limits, answered as RFC 6749 has it ' +
      '(`expires_in` a number, `scope` a string), so standard OAuth libraries (oauth4webapi, openid-client) log in with it; they find it from ' +
      '`/.well-known/oauth-authorization-server`. Client authentication `client_secret_basic` (HTTP Basic) or `client_secret_post` (the form fields).',
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

  search: route({
    tags: ['Contacts'],
    summary: 'Find contact details by telephone number',
    description:
      "The upstream's search, answered from the gateway's cache when it can (see `Cache-Status`). Impossible numbers are refused before they reach the paid upstream.",
    operationId: 'searchContacts',
    security: CLIENT,
    parameters: [WHAT, PREFER],
    responses: {
      200: {
        description: "The upstream's answer, unchanged (`total: 0`, `results: []` for no listing).",
        headers: { ...SEARCH_HEADERS, ...PREFERENCE_APPLIED },
        content: json(ref('SearchAnswer')),
      },
      ...problemResponses('bad_request', 'invalid_number', 'unauthorized', 'too_many_requests', ...UPSTREAM_PROBLEMS),
    },
  }),

  cnam: route({
    tags: ['Contacts'],
    summary: 'The caller name as plain ASCII text, for PBX dialplans (CNAM)',
    description:
      "The first result's display name folded to ASCII and cut to CNAM_MAX_LENGTH. Every lookup outcome is a 200: without a name the " +
      'body is CNAM_FALLBACK and `CNAM-Result` says why. Only wrong credentials (401) and the failed-login limit (429) get another status, ' +
      'with the fallback as body too. Default deadline CNAM_DEADLINE_MS.',
    operationId: 'cnam',
    security: CLIENT,
    parameters: [WHAT, PREFER],
    responses: {
      200: {
        description: 'The name, or the fallback.',
        headers: {
          'CNAM-Result': {
            description: 'Why this body.',
            schema: {
              enum: [
                'listed',
                'no-listing',
                'no-name',
                'not-a-number',
                'deadline',
                'upstream-error',
                'upstream-unavailable',
                'quota-exhausted',
                'rate-limited',
                'gateway-error',
              ],
            },
          },
          ...SEARCH_HEADERS,
          ...PREFERENCE_APPLIED,
        },
        content: { 'text/plain': { schema: { type: 'string', pattern: "^[A-Za-z0-9 .,'&()/+-]*$" } } },
      },
      401: {
        description: 'Missing or wrong credentials (`CNAM-Result: unauthorized`); the body is the fallback.',
        headers: {
          'WWW-Authenticate': header(
            '`Bearer realm="callerid-gateway", Basic realm="callerid-gateway", charset="UTF-8"`.',
          ),
        },
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      429: {
        description:
          'Too many failed credentials from this address (`CNAM-Result: auth-throttled`); the body is the fallback.',
        headers: { 'Retry-After': header('Seconds until credentials are checked again.') },
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...problemResponses(),
    },
  }),

  batch: route({
    tags: ['Contacts'],
    summary: 'Many searches in one request (CRMs)',
    description:
      'Each distinct number goes through the same cache, coalescing, rate, quota and concurrency bound as a single search; spellings of one ' +
      'number are looked up once; one deadline (`Prefer: wait`) bounds the whole batch. Each item carries its own status and the body or problem.',
    operationId: 'searchBatch',
    security: CLIENT,
    parameters: [PREFER],
    requestBody: { required: true, content: json(ref('BatchRequest')) },
    responses: {
      200: {
        description: 'One item per number, in order.',
        headers: { 'Cache-Control': SEARCH_HEADERS['Cache-Control'], ...RATE_LIMIT_HEADERS, ...PREFERENCE_APPLIED },
        content: json(ref('BatchAnswer')),
      },
      ...problemResponses('bad_request', 'unauthorized', 'payload_too_large', 'too_many_requests'),
    },
  }),

  purgeNumber: route({
    tags: ['Admin'],
    summary: 'Purge one number from the cache',
    description: 'For clients in GATEWAY_ADMIN_CLIENTS. Any spelling of the number reaches its one entry.',
    operationId: 'purgeNumber',
    security: GATEWAY_TOKEN,
    parameters: [
      {
        name: 'number',
        in: 'path',
        required: true,
        description: 'The number in any usual spelling (URL-encoded).',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: { description: 'Purged (`purged: 0` when it was not cached).', content: json(ref('PurgeNumber')) },
      ...problemResponses('bad_request', 'invalid_number', 'unauthorized', 'forbidden', 'unavailable'),
    },
  }),

  purgeAll: route({
    tags: ['Admin'],
    summary: 'Purge the whole cache',
    description: 'For clients in GATEWAY_ADMIN_CLIENTS.',
    operationId: 'purgeAll',
    security: GATEWAY_TOKEN,
    responses: {
      200: { description: 'Purged.', content: json(ref('PurgeAll')) },
      ...problemResponses('unauthorized', 'forbidden', 'unavailable'),
    },
  }),

  revokeClient: route({
    tags: ['Admin'],
    summary: 'Revoke every token issued to a client so far',
    description:
      'For clients in GATEWAY_ADMIN_CLIENTS. Every token issued to the client up to and including `revoked_before` (to the millisecond) is refused by every replica within a second; the answer comes after that instant, and the client logs in again for a new token. An id that is not registered: 404.',
    operationId: 'revokeClient',
    security: GATEWAY_TOKEN,
    requestBody: { required: true, content: json(ref('RevokeClientRequest')) },
    responses: {
      200: { description: 'Revoked.', content: json(ref('RevokeClient')) },
      ...problemResponses('bad_request', 'unauthorized', 'forbidden', 'not_found', 'payload_too_large', 'unavailable'),
    },
  }),

  usage: route({
    tags: ['Admin'],
    summary: "Today's use of the paid upstream per caller",
    description: 'For clients in GATEWAY_ADMIN_CLIENTS.',
    operationId: 'usage',
    security: GATEWAY_TOKEN,
    responses: {
      200: { description: "Today's figures.", content: json(ref('Usage')) },
      ...problemResponses('unauthorized', 'forbidden'),
    },
  }),

  consolePage: route({
    tags: ['Console'],
    summary: 'The console: a web page to try the search',
    description: 'Anonymous; tablets and larger (a phone gets a friendly refusal page, 403).',
    operationId: 'consolePage',
    security: ANONYMOUS,
    responses: {
      200: { description: 'The page.', content: { 'text/html': { schema: { type: 'string' } } } },
      403: { description: 'A phone: the refusal page.', content: { 'text/html': { schema: { type: 'string' } } } },
      ...problemResponses(),
    },
  }),

  consoleSearch: route({
    tags: ['Console'],
    summary: "The console's search: one provider's results, rate limited, no token",
    description:
      "Like the search, without a token, for people trying the service: only CONSOLE_PROVIDER's results, rate limited per address and in total (CONSOLE_RATE_*), refused to phones.",
    operationId: 'consoleSearch',
    security: ANONYMOUS,
    parameters: [WHAT],
    responses: {
      200: {
        description:
          "The upstream's answer with only CONSOLE_PROVIDER's results (`total` adjusted). No `Cache-Status` or `Age`: they would tell a visitor what others looked up.",
        headers: { 'Cache-Control': SEARCH_HEADERS['Cache-Control'], ...RATE_LIMIT_HEADERS },
        content: json(ref('SearchAnswer')),
      },
      ...problemResponses(
        'bad_request',
        'invalid_number',
        'device_not_supported',
        'too_many_requests',
        ...UPSTREAM_PROBLEMS,
      ),
    },
  }),
} satisfies Record<string, MiddlewareHandler>;
