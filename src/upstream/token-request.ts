// One client-credentials login at the upstream's token endpoint: the request, its outcome for the metrics, the
// parsed answer. Shared by the token manager and the Workers token Durable Object, which logs in on its own side.
import type { Clock } from '../clock.js';
import type { Telemetry, UpstreamOutcome } from '../observability/telemetry.js';
import { UpstreamTransportError, type UpstreamHttp } from './http.js';
import { parseTokenResponse, type ExpiresInUnit, type ParsedTokenResponse } from './token-response.js';

export interface TokenRequestOptions {
  http: UpstreamHttp;
  /** The upstream's `{auth_url}`; `/token/login` is appended. */
  authUrl: string;
  clientId: string;
  clientSecret: string;
  timeoutMs: number;
  expiresInUnit: ExpiresInUnit;
  clock: Clock;
  telemetry: Telemetry;
}

/** A login that failed; the message is a fixed phrase (it is logged), never part of the upstream's body. */
export class TokenRequestError extends Error {
  constructor(
    readonly outcome: UpstreamOutcome,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TokenRequestError';
  }
}

export function tokenEndpoint(authUrl: string): string {
  return `${authUrl.replace(/\/+$/, '')}/token/login`;
}

/** Logs in once; rejects with {@link TokenRequestError} on any failure (transport, status, malformed answer). */
export async function requestUpstreamToken(options: TokenRequestOptions): Promise<ParsedTokenResponse> {
  const { clock, telemetry } = options;
  const started = clock();
  const record = (outcome: UpstreamOutcome): void => telemetry.upstreamCall('token', outcome, (clock() - started) / 1000);
  let res;
  try {
    res = await options.http.request({
      method: 'POST',
      url: tokenEndpoint(options.authUrl),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: options.clientId,
        client_secret: options.clientSecret,
      }).toString(),
      timeoutMs: options.timeoutMs,
    });
  } catch (err) {
    const kind = err instanceof UpstreamTransportError ? err.kind : 'network';
    record(kind);
    throw new TokenRequestError(kind, kind === 'timeout' ? 'token endpoint timed out' : 'token endpoint unreachable');
  }
  if (res.status !== 200) {
    const outcome = tokenStatusOutcome(res.status);
    record(outcome);
    throw new TokenRequestError(outcome, `token endpoint answered ${res.status}`, res.status);
  }
  try {
    const parsed = parseTokenResponse(res.body, options.expiresInUnit);
    record('ok');
    return parsed;
  } catch (err) {
    record('malformed');
    throw new TokenRequestError('malformed', err instanceof Error ? err.message : 'malformed token response', res.status);
  }
}

export function tokenStatusOutcome(status: number): UpstreamOutcome {
  if (status === 401 || status === 403) return 'unauthorized';
  if (status >= 400 && status < 500) return 'client_error';
  return 'server_error';
}
