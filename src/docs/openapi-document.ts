// The parts of the OpenAPI document that are not a route's: info, security schemes, component schemas. The
// paths come from the routes themselves (route-docs.ts, collected by hono-openapi from the app).
import type { GenerateSpecOptions } from 'hono-openapi';
import { OAUTH_TOKEN_PATH } from '../auth/client-credentials-grant.js';
import { GATEWAY_SCOPE } from '../auth/gateway-tokens.js';
import { componentSchemas } from './openapi-schemas.js';

const API_VERSION = '0.1.0';

export function openApiOptions(): Partial<GenerateSpecOptions> {
  return {
    documentation: {
      openapi: '3.1.0',
      info: {
        title: 'callerid-gateway',
        version: API_VERSION,
        // Who runs a deployment is the operator's to say; the document names the role.
        contact: { name: 'The operators of this gateway' },
        // Not an open-source license (package.json is private); SPDX's form for a license it does not list.
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        description:
          "A caller-identification gateway in front of the Contact Lookup Service. It speaks the upstream's own API " +
          '(`POST /token/login`, `GET /v2/contacts/search`), so an existing client only changes its base URL. A new app may log in ' +
          'with a standard OAuth 2.0 library instead: `POST /oauth2/token` answers the same grant as RFC 6749 has it, found from ' +
          "`/.well-known/oauth-authorization-server` (RFC 8414); its refusals are RFC 6749's JSON. Every other error is " +
          '`application/problem+json`; its `type` links to [its description](/docs/problems).',
      },
      servers: [{ url: '/', description: 'This gateway' }],
      tags: [
        { name: 'Token', description: 'Gateway tokens for internal clients.' },
        { name: 'Contacts', description: 'Caller identification.' },
        { name: 'Console', description: 'The anonymous, restricted console (when CONSOLE_PROVIDER is set).' },
        { name: 'Admin', description: 'For clients in GATEWAY_ADMIN_CLIENTS.' },
        { name: 'Operations', description: 'Probes and metrics.' },
      ],
      components: {
        schemas: componentSchemas(),
        securitySchemes: {
          gatewayToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'A gateway token from `POST /token/login` or `POST /oauth2/token`.',
          },
          clientBasic: {
            type: 'http',
            scheme: 'basic',
            description:
              "A registered client's id and secret (GATEWAY_CLIENTS), for callers that cannot log in first (PBX dialplans); counted against the failed-login limits.",
          },
          // Swagger UI's "Authorize" logs in with this itself (client id and secret, as HTTP Basic or in the form).
          oauthClientCredentials: {
            type: 'oauth2',
            description: 'A gateway token from `POST /oauth2/token`, obtained by the client-credentials grant.',
            flows: {
              clientCredentials: {
                tokenUrl: OAUTH_TOKEN_PATH,
                scopes: { [GATEWAY_SCOPE]: 'Search contacts (the one scope of every gateway token).' },
              },
            },
          },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the operator set one.' },
        },
      },
    },
  };
}
