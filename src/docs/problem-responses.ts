// The problem responses of an operation in the OpenAPI document: the codes a route can answer with, grouped by
// status, each status's `type` limited to exactly those codes' URIs, and described from the problem catalogue.
import type { OpenAPIV3_1 } from 'openapi-types';
import { errorCodes, problemType, type ErrorCode } from '../base/errors.js';
import { ref } from './openapi-schemas.js';

const PROBLEM_JSON = 'application/problem+json';

const HEADER_DOCS: Record<string, OpenAPIV3_1.HeaderObject> = {
  'Retry-After': { description: 'Seconds until a retry can succeed.', schema: { type: 'string' } },
  'WWW-Authenticate': {
    description: 'The authentication scheme(s) accepted (RFC 6750 / RFC 7617).',
    schema: { type: 'string' },
  },
  Allow: { description: 'The methods this path accepts.', schema: { type: 'string' } },
};

/** Headers a code's answer may carry (as the catalogue lists them). */
const CODE_HEADERS: Partial<Record<ErrorCode, string[]>> = {
  unauthorized: ['WWW-Authenticate'],
  method_not_allowed: ['Allow'],
  quota_exhausted: ['Retry-After'],
  too_many_requests: ['Retry-After'],
  budget_exhausted: ['Retry-After'],
  upstream_rate_limited: ['Retry-After'],
  upstream_unavailable: ['Retry-After'],
  upstream_busy: ['Retry-After'],
  token_unavailable: ['Retry-After'],
  unavailable: ['Retry-After'],
};

/** Every route can fail with a bug; the gateway then says only "contact support" and the request id. */
const ALWAYS: readonly ErrorCode[] = ['internal'];

export function problemResponses(...codes: ErrorCode[]): Record<string, OpenAPIV3_1.ResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...ALWAYS]) {
    const { status } = errorCodes[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  const responses: Record<string, OpenAPIV3_1.ResponseObject> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = Object.fromEntries(
      [...new Set(list.flatMap((code) => CODE_HEADERS[code] ?? []))].map((name) => [name, HEADER_DOCS[name]!]),
    );
    responses[String(status)] = {
      description: list.map((code) => `\`${problemType(code)}\`: ${errorCodes[code].title}`).join('; '),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        [PROBLEM_JSON]: {
          schema: {
            allOf: [ref('Problem')],
            properties: { type: { enum: list.map(problemType) }, status: { const: status } },
          },
        },
      },
    };
  }
  return responses;
}
