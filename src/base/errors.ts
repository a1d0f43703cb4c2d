// The gateway's one error type: a closed set of codes, each with its HTTP status and RFC 9457 title.

export const errorCodes = {
  bad_request: { status: 400, title: 'Bad request' },
  invalid_number: { status: 400, title: 'Not a possible phone number' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  device_not_supported: { status: 403, title: 'Available on tablets and larger devices' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  // The cost guard's refusals (docs/cost-control.md). Listed before the generic code of the same status,
  // which stays the one a bare HTTPException of that status maps to.
  quota_exhausted: { status: 429, title: 'Upstream quota exhausted' },
  too_many_requests: { status: 429, title: 'Too many requests' },
  header_fields_too_large: { status: 431, title: 'Request header fields too large' },
  // nginx's status for a client that closed its connection before its request was whole: no one reads the answer,
  // and the request is counted apart from the gateway's own failures (5xx).
  client_closed_request: { status: 499, title: 'Client closed request' },
  internal: { status: 500, title: 'Internal error' },
  upstream_error: { status: 502, title: 'Upstream error' },
  budget_exhausted: { status: 503, title: 'Upstream budget exhausted' },
  upstream_rate_limited: { status: 503, title: 'Upstream rate limited' },
  upstream_unavailable: { status: 503, title: 'Upstream unavailable' },
  upstream_busy: { status: 503, title: 'Upstream busy' },
  token_unavailable: { status: 503, title: 'Upstream token unavailable' },
  unavailable: { status: 503, title: 'Service unavailable' },
  upstream_timeout: { status: 504, title: 'Upstream timeout' },
  // The caller's own deadline (Prefer: wait, else UPSTREAM_TIMEOUT_MS) passed; the upstream call goes on and fills the cache.
  deadline_exceeded: { status: 504, title: 'Deadline exceeded' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCodes;

export interface GatewayErrorOptions {
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
  headers?: Record<string, string>;
  /** Extension members of the problem body, e.g. RFC 6749's `error` on the token endpoint. */
  extensions?: Record<string, string>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, string>;

  constructor(code: ErrorCode, detail: string, options: GatewayErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = errorCodes[code].status;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  requestId: string;
}

/** Where the problem types are documented, one anchor per code (src/docs/problem-catalogue.ts). */
export const PROBLEMS_PAGE_PATH = '/docs/problems';

/** The anchor of a code on the problems page: `quota_exhausted` -> `quota-exhausted`. */
export const problemSlug = (code: ErrorCode): string => code.replaceAll('_', '-');

/**
 * The `type` URI of a problem: a stable identifier per code and a relative reference (RFC 9457 allows one), so it
 * resolves against the gateway that answered, to the code's entry on its own problems page, whatever its host.
 */
export const problemType = (code: ErrorCode): string => `${PROBLEMS_PAGE_PATH}#${problemSlug(code)}`;

export function problemFor(code: ErrorCode, detail: string, requestId: string): ProblemDetails {
  const { status, title } = errorCodes[code];
  return { type: problemType(code), title, status, detail, requestId };
}

/** A problem answer's parts, for a door that writes them itself (the search's JSON answers). */
export interface ProblemAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function problemAnswer(
  code: ErrorCode,
  detail: string,
  requestId: string,
  headers: Record<string, string> = {},
  extensions: Record<string, string> = {},
): ProblemAnswer {
  const body = { ...extensions, ...problemFor(code, detail, requestId) };
  return {
    status: body.status,
    headers: { ...headers, 'content-type': 'application/problem+json', 'x-request-id': requestId },
    body: JSON.stringify(body),
  };
}

export function problemResponse(
  code: ErrorCode,
  detail: string,
  requestId: string,
  headers: Record<string, string> = {},
  extensions: Record<string, string> = {},
): Response {
  return responseOf(problemAnswer(code, detail, requestId, headers, extensions));
}

/**
 * A problem body with the trace id of its request (`traceId`, which a caller can quote), and the problem's `type`;
 * a body that is no JSON object stays as it is.
 */
export function problemWithTraceId(body: string, traceId: string): { body: string; type: string | undefined } {
  let problem: unknown;
  try {
    problem = JSON.parse(body);
  } catch {
    return { body, type: undefined };
  }
  if (typeof problem !== 'object' || problem === null || Array.isArray(problem)) return { body, type: undefined };
  const { type } = problem as { type?: unknown };
  return { body: JSON.stringify({ ...problem, traceId }), type: typeof type === 'string' ? type : undefined };
}

export const responseOf = (answer: ProblemAnswer): Response =>
  new Response(answer.body, { status: answer.status, headers: answer.headers });
