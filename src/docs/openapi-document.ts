// The parts of the OpenAPI document that are not a route's: info, security schemes, component schemas. The
// paths come from the routes themselves (route-docs.ts, collected by hono-openapi from the app).
import type { GenerateSpecOptions } from 'hono-openapi';
import { componentSchemas } from './openapi-schemas.js';

export const API_VERSION = '0.1.0';

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
          '(`POST /token/login`, `GET /v2/contacts/search`), so an existing client only changes its base URL. Every error is ' +
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
            description: 'A gateway token from `POST /token/login`.',
          },
          clientBasic: {
            type: 'http',
            scheme: 'basic',
            description:
              "A registered client's id and secret (GATEWAY_CLIENTS), for callers that cannot log in first (PBX dialplans); counted against the failed-login limits.",
          },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when the operator set one.' },
        },
      },
    },
  };
}
