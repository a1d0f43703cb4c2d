// One login at the upstream's token endpoint (client-credentials grant): the request, its outcome metric, and
// the upstream's non-standard token JSON turned into a token with absolute times.
import type { Clock } from '../base/clock.js';
import { transportOutcome, type Telemetry, type UpstreamOutcome } from '../observability/telemetry.js';
import { endUpstreamSpan, startUpstreamSpan, traceHeaders, upstreamCall } from '../observability/tracing/http-spans.js';
import type { Span } from '../observability/tracing/span.js';
import { disabledTracer, type Tracer } from '../observability/tracing/tracer.js';
import type { ObtainedToken } from '../shared-state/token-store.js';
import { UpstreamTransportError, type UpstreamHttp } from '../base/upstream-http.js';
import { parseTokenResponse, type ExpiresInUnit } from './token-response.js';

/** Why a login failed, in words safe for logs (never the body, the token or the secret). */
export class RefreshFailure extends Error {
  constructor(
    readonly outcome: UpstreamOutcome,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RefreshFailure';
  }
}

/** Where and as whom the gateway logs in. */
export interface TokenEndpointConfig {
  http: UpstreamHttp;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  /** The login's own timeout. */
  timeoutMs: number;
  expiresInUnit: ExpiresInUnit;
  /** A client span per login, its context in the login's `traceparent`; default off. */
  tracer?: Tracer | undefined;
}

export interface TokenEndpointOptions extends TokenEndpointConfig {
  clock: Clock;
  telemetry: Telemetry;
}

export interface TokenEndpoint {
  /**
   * Rejects with RefreshFailure. `span`: the span of the request that needed the token, which the login's goes under;
   * `started` is told the login's own client span as it begins (what the searches waiting on it link to).
   */
  login(span?: Span, started?: (login: Span) => void): Promise<ObtainedToken>;
}

export function createTokenEndpoint(options: TokenEndpointOptions): TokenEndpoint {
  const { clock, telemetry } = options;
  const tokenUrl = `${options.authUrl.replace(/\/+$/, '')}${LOGIN_PATH}`;
  const tracer = options.tracer ?? disabledTracer;
  const call = upstreamCall('POST', options.authUrl, LOGIN_PATH);

  async function fetchToken(
    parent: Span | undefined,
    spanStarted: ((login: Span) => void) | undefined,
  ): Promise<{ accessToken: string; lifetimeMs: number }> {
    const started = clock();
    const span = startUpstreamSpan(tracer, parent, call);
    spanStarted?.(span);
    const record = (outcome: UpstreamOutcome): void =>
      telemetry.upstreamCall('token', outcome, (clock() - started) / 1000);
    let res;
    try {
      res = await options.http.request({
        method: 'POST',
        url: tokenUrl,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          ...traceHeaders(span),
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: options.clientId,
          client_secret: options.clientSecret,
        }).toString(),
        timeoutMs: options.timeoutMs,
      });
    } catch (err) {
      const kind = err instanceof UpstreamTransportError ? err.kind : 'network';
      endUpstreamSpan(span, { errorType: kind });
      const outcome = transportOutcome(kind);
      record(outcome);
      const reason = {
        timeout: 'token endpoint timed out',
        network: 'token endpoint unreachable',
        too_large: 'token endpoint answered too large a body',
        encoded: 'token endpoint answered an encoded body',
      }[kind];
      throw new RefreshFailure(outcome, reason);
    }
    endUpstreamSpan(span, { status: res.status });
    if (res.status !== 200) {
      const outcome = loginStatusOutcome(res.status);
      record(outcome);
      throw new RefreshFailure(outcome, `token endpoint answered ${res.status}`, res.status);
    }
    try {
      const parsed = parseTokenResponse(res.body, options.expiresInUnit);
      record('ok');
      return parsed;
    } catch (err) {
      record('malformed');
      throw new RefreshFailure(
        'malformed',
        err instanceof Error ? err.message : 'malformed token response',
        res.status,
      );
    }
  }

  return {
    async login(span, started) {
      // Lifetime counts from when we asked, not when the answer arrived: the upstream's clock
      // started no later than that.
      const obtainedAt = clock();
      const { accessToken, lifetimeMs } = await fetchToken(span, started);
      return { token: accessToken, obtainedAt, expiresAt: obtainedAt + lifetimeMs };
    },
  };
}

const LOGIN_PATH = '/token/login';

/** A login's status as a metric outcome: 401 and 403 both mean the gateway's credentials were refused. */
function loginStatusOutcome(status: number): UpstreamOutcome {
  if (status === 401 || status === 403) return 'unauthorized';
  if (status >= 400 && status < 500) return 'client_error';
  return 'server_error';
}
