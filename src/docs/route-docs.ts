// What the OpenAPI descriptions of the operations share (operations/*/*-docs.ts): security, header and parameter
// pieces, the upstream's problems, and `route`, which makes a description a hono-openapi middleware the route puts
// first in its handler list. The document at /openapi.json is generated from the routes the app really registers (a
// route without a description is missing from it, and a test says so).
import { describeRoute } from 'hono-openapi';
import type { OpenAPIV3_1 } from 'openapi-types';
import type { MiddlewareHandler } from 'hono';
import { GATEWAY_SCOPE } from '../auth/gateway-tokens.js';
import { ref } from './openapi-schemas.js';

export const json = (schema: OpenAPIV3_1.SchemaObject | OpenAPIV3_1.ReferenceObject) => ({
  'application/json': { schema },
});
export const header = (description: string): OpenAPIV3_1.HeaderObject => ({ description, schema: { type: 'string' } });

/** A gateway token, pasted in or obtained by Swagger UI's client-credentials login (the same token either way). */
export const GATEWAY_TOKEN: OpenAPIV3_1.SecurityRequirementObject[] = [
  { gatewayToken: [] },
  { oauthClientCredentials: [GATEWAY_SCOPE] },
];
/** The search routes also take a registered client's id and secret as HTTP Basic (a dialplan cannot log in first). */
export const CLIENT: OpenAPIV3_1.SecurityRequirementObject[] = [...GATEWAY_TOKEN, { clientBasic: [] }];
export const ANONYMOUS: OpenAPIV3_1.SecurityRequirementObject[] = [];

// draft-ietf-httpapi-ratelimit-headers-11; RATELIMIT_HEADERS=draft-6 or both sends the older trio instead or as well.
export const RATE_LIMIT_HEADERS = {
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

export const SEARCH_HEADERS = {
  'Cache-Control': header('`private, no-store`: contact data is personal.'),
  'Cache-Status': header(
    'RFC 9211: what the cache did, e.g. `callerid-gateway; hit; ttl=86280` or `callerid-gateway; fwd=miss; fwd-status=200; stored; ttl=86400`.',
  ),
  Age: header('Seconds since the upstream gave this answer.'),
  ...RATE_LIMIT_HEADERS,
};

/** RFC 6749 sections 5.1 and 5.2: a token answer, or a refusal of one, is never cached. */
export const NO_STORE_HEADERS = { 'Cache-Control': header('`no-store`.'), Pragma: header('`no-cache`.') };

export const WHAT: OpenAPIV3_1.ParameterObject = {
  name: 'what',
  in: 'query',
  required: true,
  description:
    'The telephone number in any usual spelling (`+44 20 7946 0001`, `0044 20 7946 0001`, `020 7946 0001` with DEFAULT_REGION=GB); normalised to E.164. Give it once.',
  schema: { type: 'string', minLength: 1 },
  examples: { international: { value: '+44 20 7946 0001' }, national: { value: '020 7946 0001' } },
};

export const PREFER: OpenAPIV3_1.ParameterObject = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    'RFC 7240 `wait=N` (seconds, decimals allowed): answer by then, with a stale entry or 504 `deadline-exceeded` if nothing fresh ' +
    'came in time; the upstream call goes on and fills the cache. Bounded by UPSTREAM_TIMEOUT_MS; without it a search waits that long (the CNAM route: CNAM_DEADLINE_MS).',
  schema: { type: 'string' },
  examples: { ring: { value: 'wait=0.8' } },
};

export const PREFERENCE_APPLIED = {
  'Preference-Applied': header("`wait=N` when the caller's wait was honoured, with the value used."),
};

/** Refusals of a search that would need the paid upstream, and its failures. */
export const UPSTREAM_PROBLEMS = [
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

export const route = (spec: Parameters<typeof describeRoute>[0]): MiddlewareHandler => describeRoute(spec);

/** What any route may meet before the gateway sees the request: Node's own 400 and 431 (plain text). */
export const MALFORMED_REQUEST = {
  '4XX': {
    description:
      'A malformed request (400) or request headers over 16 KiB (431), answered by the HTTP server before the gateway sees the request.',
  },
};

/** The refusals of client authentication at every OAuth endpoint (token, revocation, introspection). */
export const OAUTH_CLIENT_REFUSALS = {
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
