// The OpenAPI 3.1 component schemas (JSON Schema 2020-12) of the gateway's answers, referenced by the route
// descriptions in route-docs.ts. The tests check real answers against them (test/docs/openapi.test.ts).
import type { OpenAPIV3_1 } from 'openapi-types';
import { UPSTREAM_BODY } from '../upstream/search-client.js';
import { GATEWAY_SCOPE } from '../auth/gateway-tokens.js';
import { CLIENT_AUTH_METHODS } from '../auth/endpoint-client-auth.js';

type Schema = OpenAPIV3_1.SchemaObject;

export const ref = (name: string): OpenAPIV3_1.ReferenceObject => ({ $ref: `#/components/schemas/${name}` });

const E164: Schema = {
  type: 'string',
  pattern: '^\\+[1-9][0-9]{1,14}$',
  description: 'The number in E.164.',
  examples: ['+442079460001'],
};
const count: Schema = { type: 'integer', minimum: 0 };
const countOrNull: Schema = { type: ['integer', 'null'], minimum: 0 };

/** The form fields of the client-credentials grant, on both token endpoints. */
const GRANT_FIELDS: Record<string, Schema> = {
  grant_type: { type: 'string', enum: ['client_credentials'] },
  client_id: { type: 'string', description: 'A client id registered in GATEWAY_CLIENTS.' },
  client_secret: { type: 'string', format: 'password' },
};

/** The token both token endpoints answer with, in the same two members. */
const ISSUED_TOKEN: Record<string, Schema> = {
  access_token: {
    type: 'string',
    minLength: 1,
    description: 'The gateway token (an HS256 JWT); send it as Authorization: Bearer.',
  },
  token_type: { const: 'Bearer' },
};

/** The example search body: the built-in simulator's, which the default UPSTREAM_*_PATH settings match. */
const SEARCH_EXAMPLE = {
  query: { what: '+442079460001' },
  total: 1,
  results: [
    {
      id: 'swissdir:7f3c9a12',
      provider: { id: 'swissdir', name: 'SwissDir' },
      type: 'person',
      displayName: 'Muster Hans',
      phones: [{ e164: '+442079460001', display: '020 7946 0001', kind: 'landline' }],
    },
  ],
};

export function componentSchemas(): Record<string, Schema> {
  const { resultsPath, providerPath, totalPath } = UPSTREAM_BODY;
  return {
    Problem: {
      type: 'object',
      description: 'RFC 9457 problem details. Every error of the gateway is one, as application/problem+json.',
      required: ['type', 'title', 'status', 'detail', 'requestId'],
      additionalProperties: false,
      properties: {
        type: {
          type: 'string',
          format: 'uri-reference',
          description: 'Identifies the problem; resolves (relative to the gateway) to its entry on /docs/problems.',
        },
        title: { type: 'string' },
        status: { type: 'integer', minimum: 400, maximum: 599 },
        detail: { type: 'string' },
        requestId: { type: 'string', description: 'Also in the X-Request-Id header; quote it to support.' },
        error: {
          type: 'string',
          enum: ['invalid_request', 'invalid_client', 'unsupported_grant_type', 'temporarily_unavailable'],
          description: 'POST /token/login only: the RFC 6749 error code.',
        },
        error_description: { type: 'string', description: 'POST /token/login only: the RFC 6749 error description.' },
      },
    },
    TokenRequest: {
      type: 'object',
      description:
        "The upstream's own client-credentials grant, form-encoded. `client_id` and `client_secret` are left out when the client sends them as HTTP Basic instead.",
      required: ['grant_type'],
      properties: GRANT_FIELDS,
    },
    TokenResponse: {
      type: 'object',
      description:
        "Exactly the upstream's token response shape (not standard OAuth: expires_in is a string, scope an array of objects).",
      required: ['access_token', 'token_type', 'expires_in', 'scope', 'uniqueId', 'clientId'],
      additionalProperties: false,
      properties: {
        ...ISSUED_TOKEN,
        expires_in: {
          type: 'string',
          pattern: '^[0-9]+$',
          description: 'Lifetime in seconds, as a string (GATEWAY_TOKEN_TTL_SECONDS).',
          examples: ['90000'],
        },
        scope: {
          type: 'array',
          items: {
            type: 'object',
            required: ['service', 'permission', 'orderId'],
            additionalProperties: false,
            properties: {
              service: { type: 'string', examples: ['SEARCH_contacts_watch'] },
              permission: { type: 'string', examples: ['READ'] },
              orderId: { type: ['string', 'null'] },
            },
          },
        },
        uniqueId: { type: ['string', 'null'] },
        clientId: { type: 'string', description: 'Echoes client_id.' },
      },
    },
    OAuthTokenRequest: {
      type: 'object',
      description:
        'The client-credentials grant of RFC 6749 section 4.4, form-encoded. `client_id` and `client_secret` are the form fields of `client_secret_post`; with `client_secret_basic` they come as HTTP Basic instead and are left out here.',
      required: ['grant_type'],
      properties: {
        ...GRANT_FIELDS,
        scope: {
          type: 'string',
          description: `Optional; space-delimited. The only scope is \`${GATEWAY_SCOPE}\`, granted also when none is asked for.`,
          examples: [GATEWAY_SCOPE],
        },
      },
    },
    OAuthTokenResponse: {
      type: 'object',
      description: 'RFC 6749 section 5.1: the same gateway token as `POST /token/login` issues.',
      required: ['access_token', 'token_type', 'expires_in', 'scope'],
      additionalProperties: false,
      properties: {
        ...ISSUED_TOKEN,
        expires_in: {
          type: 'integer',
          minimum: 1,
          description: 'Lifetime in seconds (GATEWAY_TOKEN_TTL_SECONDS).',
          examples: [90000],
        },
        scope: { type: 'string', description: 'Space-delimited; the one scope.', examples: [GATEWAY_SCOPE] },
      },
    },
    OAuthRevocationRequest: {
      type: 'object',
      description:
        'RFC 7009 and RFC 7662 section 2.1, form-encoded. `client_id` and `client_secret` as at the token endpoint (`client_secret_post`), or HTTP Basic instead.',
      required: ['token'],
      properties: {
        token: { type: 'string', description: 'The gateway token to revoke or introspect.' },
        token_type_hint: { type: 'string', description: 'Read as a hint only: the gateway has access tokens alone.' },
        client_id: GRANT_FIELDS.client_id!,
        client_secret: GRANT_FIELDS.client_secret!,
      },
    },
    Introspection: {
      type: 'object',
      description: 'RFC 7662 section 2.2: `active` alone when the token is not active.',
      required: ['active'],
      additionalProperties: false,
      properties: {
        active: { type: 'boolean' },
        client_id: { type: 'string' },
        sub: { type: 'string', description: 'The client id, as `client_id`.' },
        scope: { const: GATEWAY_SCOPE },
        token_type: { const: 'Bearer' },
        exp: { type: 'integer' },
        iat: { type: 'integer' },
        jti: { type: 'string' },
        cnf: {
          type: 'object',
          description: 'RFC 8705 section 3.2: the certificate a certificate-bound token is confirmed by.',
          required: ['x5t#S256'],
          properties: { 'x5t#S256': { type: 'string', description: 'The base64url SHA-256 of the certificate.' } },
        },
      },
    },
    RevokeClientRequest: {
      type: 'object',
      required: ['client_id'],
      properties: { client_id: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$' } },
    },
    RevokeClient: {
      type: 'object',
      description: 'Every token issued to the client before `revoked_before` is refused from now on.',
      required: ['client_id', 'revoked_before', 'reach'],
      additionalProperties: false,
      properties: {
        client_id: { type: 'string' },
        revoked_before: { type: 'string', format: 'date-time' },
        reach: {
          type: 'string',
          enum: ['process', 'deployment'],
          description: 'This process only (no shared store), or every replica (Redis, the Durable Object).',
        },
      },
    },
    OAuthError: {
      type: 'object',
      description: 'RFC 6749 section 5.2, as application/json (not a problem: OAuth clients read these members).',
      required: ['error', 'error_description'],
      additionalProperties: false,
      properties: {
        error: {
          type: 'string',
          enum: [
            'invalid_request',
            'invalid_client',
            'unsupported_grant_type',
            'invalid_scope',
            'unauthorized_client',
            'temporarily_unavailable',
          ],
          description:
            '`temporarily_unavailable`: too many failed logins (LOGIN_FAILURES_*), or a revocation the shared store did not take. `unauthorized_client`: an introspection by a client that is not an admin.',
        },
        error_description: { type: 'string' },
      },
    },
    AuthorizationServerMetadata: {
      type: 'object',
      description: 'RFC 8414 authorization server metadata of the token endpoint.',
      required: [
        'issuer',
        'token_endpoint',
        'grant_types_supported',
        'token_endpoint_auth_methods_supported',
        'scopes_supported',
        'response_types_supported',
      ],
      additionalProperties: false,
      properties: {
        issuer: {
          type: 'string',
          format: 'uri',
          description: 'PUBLIC_BASE_URL; only without it (development), the origin the request came to.',
          examples: ['https://callerid.example.com'],
        },
        token_endpoint: { type: 'string', format: 'uri', examples: ['https://callerid.example.com/oauth2/token'] },
        grant_types_supported: { type: 'array', items: { const: 'client_credentials' } },
        token_endpoint_auth_methods_supported: {
          type: 'array',
          items: { type: 'string', enum: [...CLIENT_AUTH_METHODS] },
        },
        revocation_endpoint: {
          type: 'string',
          format: 'uri',
          examples: ['https://callerid.example.com/oauth2/revoke'],
        },
        revocation_endpoint_auth_methods_supported: {
          type: 'array',
          items: { type: 'string', enum: [...CLIENT_AUTH_METHODS] },
        },
        introspection_endpoint: {
          type: 'string',
          format: 'uri',
          examples: ['https://callerid.example.com/oauth2/introspect'],
        },
        introspection_endpoint_auth_methods_supported: {
          type: 'array',
          items: { type: 'string', enum: [...CLIENT_AUTH_METHODS] },
        },
        scopes_supported: { type: 'array', items: { type: 'string' }, examples: [[GATEWAY_SCOPE]] },
        tls_client_certificate_bound_access_tokens: {
          type: 'boolean',
          description:
            'RFC 8705 section 3.3, where the gateway reads client certificates (with `tls_client_auth` among the methods).',
        },
        response_types_supported: {
          type: 'array',
          items: { type: 'string' },
          maxItems: 0,
          description: 'Empty: there is no authorization endpoint, only the client-credentials grant.',
        },
        service_documentation: {
          type: 'string',
          format: 'uri',
          description: 'This API reference (/docs), where the runtime serves it.',
        },
      },
    },
    SearchAnswer: {
      type: 'object',
      description:
        `The upstream's search JSON, passed through unchanged (the console removes other providers' results). The gateway reads ` +
        `only the results list at \`${resultsPath}\` (absent or empty: no listing), each result's provider at ` +
        `\`${providerPath}\` and the count at \`${totalPath}\`; everything else is the upstream's.`,
      additionalProperties: true,
      examples: [SEARCH_EXAMPLE],
    },
    BatchRequest: {
      type: 'object',
      required: ['numbers'],
      properties: {
        numbers: {
          type: 'array',
          items: { type: 'string' },
          description: 'Numbers in any usual spelling; at most BATCH_MAX_NUMBERS.',
        },
      },
      examples: [{ numbers: ['+44 20 7946 0001', '020 7946 0002', 'unknown'] }],
    },
    BatchAnswer: {
      type: 'object',
      required: ['results'],
      additionalProperties: false,
      properties: {
        results: {
          type: 'array',
          items: {
            type: 'object',
            required: ['what', 'e164', 'status'],
            additionalProperties: false,
            properties: {
              what: { type: 'string', description: 'The spelling as sent.' },
              e164: { anyOf: [E164, { type: 'null' }], description: 'null when it is not a possible number.' },
              status: { type: 'integer', description: 'What a single search would have answered.' },
              cacheStatus: { type: ['string', 'null'], description: 'The Cache-Status a single search would carry.' },
              body: { ...ref('SearchAnswer'), description: "status 200: the upstream's answer." },
              problem: { ...ref('Problem'), description: 'otherwise: the problem a single search would answer.' },
            },
          },
        },
      },
    },
    Health: {
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: { status: { const: 'ok' } },
    },
    Ready: {
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: { status: { const: 'ready' } },
    },
    PurgeNumber: {
      type: 'object',
      required: ['number', 'purged', 'reach'],
      additionalProperties: false,
      properties: { number: E164, purged: count, reach: ref('PurgeReach') },
    },
    PurgeAll: {
      type: 'object',
      required: ['purged', 'reach'],
      additionalProperties: false,
      properties: { purged: count, reach: ref('PurgeReach') },
    },
    PurgeReach: {
      type: 'string',
      enum: ['process', 'deployment', 'data-centre'],
      description:
        'How far the purge went: this process only, every replica through Redis, or this data centre (Workers).',
    },
    Usage: {
      type: 'object',
      description:
        "Today's (UTC) use of the paid upstream as the counter store has it; breaker, cooldown and concurrency of the answering process.",
      required: ['day', 'resetsAt', 'clients', 'budget', 'breaker', 'cooldown', 'concurrency', 'store'],
      additionalProperties: false,
      properties: {
        day: { type: 'string', format: 'date' },
        resetsAt: { type: 'string', format: 'date-time' },
        clients: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'searches', 'upstreamCalls', 'quota', 'remaining'],
            additionalProperties: false,
            properties: {
              id: { type: 'string' },
              searches: count,
              upstreamCalls: count,
              quota: countOrNull,
              remaining: countOrNull,
            },
          },
        },
        budget: {
          type: 'object',
          required: ['limit', 'used', 'remaining'],
          additionalProperties: false,
          properties: { limit: countOrNull, used: count, remaining: countOrNull },
        },
        breaker: {
          type: 'object',
          required: ['state', 'consecutiveFailures', 'retryInMs', 'retryAfterSeconds'],
          additionalProperties: false,
          properties: {
            state: { enum: ['closed', 'open', 'half_open'] },
            consecutiveFailures: count,
            retryInMs: { type: 'number', minimum: 0 },
            retryAfterSeconds: count,
          },
        },
        cooldown: {
          type: 'object',
          required: ['active', 'retryAfterSeconds'],
          additionalProperties: false,
          properties: { active: { type: 'boolean' }, retryAfterSeconds: count },
        },
        concurrency: {
          type: 'object',
          required: ['limit', 'inFlight', 'queued'],
          additionalProperties: false,
          properties: { limit: count, inFlight: count, queued: count },
        },
        store: { enum: ['memory', 'redis', 'durable-object'] },
      },
    },
  };
}
