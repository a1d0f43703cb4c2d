// What each problem type means and what a caller should do about it: the entries of /docs/problems, which the
// `type` URI of every problem+json answer points at. A Record over ErrorCode, so a new code cannot go undocumented.
import type { ErrorCode } from '../base/errors.js';

export interface ProblemEntry {
  /** When the gateway answers with it. */
  when: string;
  /** What the caller should do. */
  action: string;
  /** Headers that come with it. */
  headers?: string;
}

export const PROBLEM_CATALOGUE: Record<ErrorCode, ProblemEntry> = {
  bad_request: {
    when: 'The request is malformed: a required parameter is missing or repeated (`what` given twice), the token request is not form-encoded or misses a field (then `error` is `invalid_request` or `unsupported_grant_type`, as RFC 6749 says).',
    action: 'Fix the request; repeating it unchanged gives the same answer.',
  },
  invalid_number: {
    when: 'The number is not a possible telephone number in any usual spelling (with `DEFAULT_REGION` for national formats). It never reaches the paid upstream.',
    action: 'Check the number; an international format (`+44 20 7946 0001`, `0044…`) always works.',
  },
  unauthorized: {
    when: 'No gateway token, an invalid or expired one, wrong client credentials at `POST /token/login` (`error: invalid_client`), or a missing `METRICS_TOKEN` on `/metrics`.',
    action: 'Obtain a new token with `POST /token/login` and send it as `Authorization: Bearer <token>`.',
    headers: '`WWW-Authenticate`',
  },
  forbidden: {
    when: 'The token is valid, but this client may not do this (the admin routes need a client listed in `GATEWAY_ADMIN_CLIENTS`).',
    action: 'Use an admin client, or ask the operator.',
  },
  device_not_supported: {
    when: 'The console was asked from a phone (`Sec-CH-UA-Mobile: ?1` or a mobile User-Agent); it is available on tablets and larger.',
    action: 'Open the console on a tablet or a computer; apps use the API with a token instead.',
  },
  not_found: {
    when: 'No such resource: an unknown path, anything under `/console` the console does not serve, `/docs` while `DOCS_ENABLED=false`, or a `client_id` no client is registered under (`POST /admin/tokens/revoke-client`).',
    action: 'Check the path against the API reference at `/docs` or `/openapi.json`.',
  },
  method_not_allowed: {
    when: 'The path exists but not with this method.',
    action: 'Use one of the methods the `Allow` header lists.',
    headers: '`Allow`',
  },
  request_timeout: {
    when: 'The client did not send its header fields within `HTTP_HEADERS_TIMEOUT_SECONDS`, or its whole request within `HTTP_REQUEST_TIMEOUT_SECONDS`; the connection is closed.',
    action: 'Send the request at once; a client that trickles its request is cut.',
  },
  payload_too_large: {
    when: 'The request body is larger than `REQUEST_MAX_BODY_BYTES`; it is not read, and the connection is closed.',
    action: 'Send a smaller body: a token request is three short form fields.',
  },
  expectation_failed: {
    when: 'The request has an `Expect` field other than `100-continue`, the only expectation HTTP defines; the connection is closed.',
    action: 'Send the request without `Expect`, or with `Expect: 100-continue` before a large body.',
  },
  quota_exhausted: {
    when: "The calling client's daily upstream quota (`CLIENT_UPSTREAM_QUOTA_PER_DAY`, `CLIENT_UPSTREAM_QUOTAS`) is spent and the number is not cached. Cached numbers are still answered.",
    action: 'Wait until the quota resets at 00:00 UTC (`Retry-After`), or ask the operator for a larger quota.',
    headers: '`Retry-After`',
  },
  too_many_requests: {
    when: 'Too many requests: a registered client over `CLIENT_RATE_PER_MINUTE`, the console over its per-address or total limit, or too many failed logins for a client id or from an address (`LOGIN_FAILURES_*`; then `error` is `temporarily_unavailable`).',
    action: 'Wait `Retry-After` seconds; on searches the `RateLimit` field says how much is left.',
    headers: '`Retry-After`, and on searches `RateLimit` and `RateLimit-Policy`',
  },
  header_fields_too_large: {
    when: 'The request header fields are larger than 16 KiB in all; the connection is closed.',
    action: 'Send fewer or shorter header fields: a search needs `Authorization` and little else.',
  },
  client_closed_request: {
    when: 'The client closed its connection before its request was whole (a body shorter than its `Content-Length`, cut mid-way). Nothing is sent, as no one reads it; the request is logged and counted with status 499.',
    action:
      'Nothing to do for a caller that gave up on purpose; otherwise check what cuts its connections (a proxy timeout, a crash mid-upload).',
  },
  internal: {
    when: 'A bug in the gateway. No internals are shown.',
    action: 'Contact support and quote the `requestId`.',
  },
  upstream_error: {
    when: 'The Contact Lookup Service failed or answered something unusable, and no stale answer could stand in.',
    action: 'Retry later; the operator sees it in the upstream error metrics.',
  },
  budget_exhausted: {
    when: "The deployment's daily upstream budget (`UPSTREAM_BUDGET_PER_DAY`) is spent and the number is not cached.",
    action: 'Wait until 00:00 UTC (`Retry-After`); cached numbers are still answered.',
    headers: '`Retry-After`',
  },
  upstream_rate_limited: {
    when: 'The upstream answered 429 and the gateway pauses its calls for its `Retry-After` (or `UPSTREAM_COOLDOWN_SECONDS`).',
    action: 'Retry after `Retry-After` seconds; cached numbers are still answered.',
    headers: '`Retry-After`',
  },
  upstream_unavailable: {
    when: 'The circuit breaker is open: the upstream failed `UPSTREAM_BREAKER_FAILURES` times in a row, and the gateway does not call it until a trial call succeeds.',
    action: 'Retry after `Retry-After` seconds; cached numbers are still answered.',
    headers: '`Retry-After`',
  },
  upstream_busy: {
    when: 'Too many upstream calls are in flight and waiting on this replica (`UPSTREAM_MAX_CONCURRENCY`, `UPSTREAM_MAX_QUEUE`).',
    action: 'Retry after `Retry-After` (1 s).',
    headers: '`Retry-After`',
  },
  token_unavailable: {
    when: 'The gateway cannot obtain a token from the upstream right now (its token endpoint fails or refuses the credentials).',
    action: 'Retry after `Retry-After`, if given; the operator is alerted by the token metrics.',
    headers: '`Retry-After` (during back-off)',
  },
  unavailable: {
    when: 'The gateway cannot serve this now: not ready (`/readyz`), a shared store configured to fail closed does not answer, a purge or a revocation reached only this replica, or a gateway token cannot be checked yet because this replica has not read the revocations from the shared store since it started.',
    action: 'Retry after `Retry-After`.',
    headers: '`Retry-After`',
  },
  deadline_exceeded: {
    when: 'No answer within the deadline the caller set (`Prefer: wait=N`, else `UPSTREAM_TIMEOUT_MS`) and no stale answer to give. The upstream call goes on and fills the cache.',
    action: 'Ask again shortly: the next request is likely a cache hit.',
  },
  upstream_timeout: {
    when: 'The upstream did not answer within `UPSTREAM_TIMEOUT_MS` (or the wait the caller asked for), and no stale answer could stand in.',
    action: 'Retry; the next attempt is often a cache hit, since the call may finish in the background.',
  },
};
