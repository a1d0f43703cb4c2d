// The upstream contact search: one deadline per lookup, the gateway's own token, one retry after a 401; and where the
// gateway reads the upstream's answer (results, providers, names), for "no listing", the console filter and CNAM.

import { systemClock, type Clock } from '../base/clock.js';
import { GatewayError } from '../base/errors.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { noopTelemetry, transportOutcome, type Telemetry, type UpstreamOutcome } from '../observability/telemetry.js';
import {
  endUpstreamSpan,
  startUpstreamSpan,
  traceHeaders,
  upstreamCall,
  type UpstreamCall,
} from '../observability/tracing/http-spans.js';
import type { Span } from '../observability/tracing/span.js';
import { disabledTracer, type Tracer } from '../observability/tracing/tracer.js';
import { UpstreamTransportError, type UpstreamHttp, type UpstreamResponse } from '../base/upstream-http.js';
import { boundedRetryAfter, UpstreamRateLimitedError } from './rate-limited.js';
import type { TokenManager } from './token-manager.js';

/**
 * The places in the upstream's search JSON the gateway reads; the rest passes through untouched. The spec does not
 * show the body: these follow the built-in simulator's schema. The upstream is one fixed service, so its body's
 * shape is one fact for every deployment, kept here rather than in each deployment's settings.
 */
export const UPSTREAM_BODY = {
  /** The results array (absent or empty: "no listing"). */
  resultsPath: 'results',
  /** A result's directory provider id (the console filter). */
  providerPath: 'provider.id',
  /** The result count, adjusted by the console filter. */
  totalPath: 'total',
  /** A result's provider name (CONSOLE_PROVIDER may give it instead of the id). */
  providerNamePath: 'provider.name',
  /** A result's display name (the CNAM route's caller name). */
  displayNamePath: 'displayName',
} as const;

/** Splits a dotted path once, at configuration time. */
export function parsePath(path: string): string[] {
  return path.split('.').filter(Boolean);
}

/** The value at `steps` inside `value`, or undefined where the path leaves the objects. */
export function readPath(value: unknown, steps: readonly string[]): unknown {
  let node = value;
  for (const step of steps) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[step];
  }
  return node;
}

/** True when the value at `path` in the JSON `body` is a non-empty array; false for anything else. */
export function hasListing(body: string, path: string | readonly string[]): boolean {
  const steps = typeof path === 'string' ? parsePath(path) : path;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return false;
  }
  const results = readPath(value, steps);
  return Array.isArray(results) && results.length > 0;
}

/** The upstream's answer to one search: what the cache keeps and the routes pass through. */
export interface UpstreamAnswer {
  /** The upstream's JSON exactly as received, so the cache and the API route pass it through unchanged. */
  body: string;
  contentType: string;
  /** Whether the body lists anything at `resultsPath`, read from the one parse that vouched for it; absent without a path. */
  listed?: boolean;
}

interface SearchOptions {
  /** Epoch ms (on the client's clock) the whole lookup must end by; default now + `timeoutMs`. */
  deadline?: number;
  /** The span each exchange's client span goes under, and whose trace the upstream request carries. */
  span?: Span | undefined;
}

export interface SearchClient {
  /** Rejects with a GatewayError; an upstream 429 with an {@link UpstreamRateLimitedError} carrying its Retry-After. */
  search(e164: string, options?: SearchOptions): Promise<UpstreamAnswer>;
}

export interface SearchClientOptions {
  http: UpstreamHttp;
  /** The upstream's bearer token, in custody. */
  upstreamTokens: TokenManager;
  baseUrl: string;
  /** The whole lookup: waiting for a token, the search, and the one retry after a 401. */
  timeoutMs: number;
  clock?: Clock;
  telemetry?: Telemetry;
  logger?: Logger;
  /** Dotted path of the results array (UPSTREAM_BODY.resultsPath): the answer says whether it lists anything. */
  resultsPath?: string;
  /** The longest pause an upstream 429's Retry-After may impose (UPSTREAM_COOLDOWN_MAX_SECONDS); default one hour. */
  maxRetryAfterMs?: number;
  /** A client span per exchange, its context in the request's `traceparent`; default off. */
  tracer?: Tracer | undefined;
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** The search client's settings and parts, fixed when it is made, and the request headers of the current token. */
interface Searcher {
  options: SearchClientOptions;
  clock: Clock;
  telemetry: Telemetry;
  logger: Logger;
  searchUrl: string;
  resultsPath: string[] | undefined;
  maxRetryAfterMs: number;
  /** The request headers change only with the token: built once per token, not once per search. */
  headersOf: { token: string; headers: Record<string, string> };
  tracer: Tracer;
  /** The exchange as its client span names it: the URL's template, never the number. */
  call: UpstreamCall;
}

const SEARCH_PATH = '/v2/contacts/search';

export function createSearchClient(options: SearchClientOptions): SearchClient {
  const s: Searcher = {
    options,
    clock: options.clock ?? systemClock,
    telemetry: options.telemetry ?? noopTelemetry,
    logger: options.logger ?? silentLogger,
    searchUrl: `${options.baseUrl.replace(/\/+$/, '')}${SEARCH_PATH}`,
    resultsPath: options.resultsPath === undefined ? undefined : parsePath(options.resultsPath),
    maxRetryAfterMs: options.maxRetryAfterMs ?? 3_600_000,
    headersOf: { token: '', headers: {} },
    tracer: options.tracer ?? disabledTracer,
    call: upstreamCall('GET', options.baseUrl, SEARCH_PATH, ['what']),
  };
  return { search: (e164, searchOptions) => search(s, e164, searchOptions) };
}

async function search(s: Searcher, e164: string, searchOptions: SearchOptions = {}): Promise<UpstreamAnswer> {
  const { logger, options } = s;
  const { upstreamTokens } = options;
  // A caller that queued for a slot first hands in what is left of the lookup's deadline.
  const deadline = searchOptions.deadline ?? s.clock() + options.timeoutMs;
  const url = `${s.searchUrl}?what=${encodeURIComponent(e164)}`;

  const firstToken = upstreamTokens.peek?.() ?? (await tokenBefore(s, deadline, searchOptions.span));
  const exchange = { url, deadline, span: searchOptions.span };
  let reply = await send(s, exchange, firstToken, 1);
  if (isRefusal(reply) && reply.status === 401) {
    logger.info(
      { event: 'upstream_search_unauthorized', attempt: 1 },
      'upstream refused the token; retrying with a fresh one',
    );
    upstreamTokens.invalidate(firstToken);
    const secondToken = await tokenBefore(s, deadline, searchOptions.span);
    reply = await send(s, exchange, secondToken, 2);
    if (isRefusal(reply) && reply.status === 401) {
      logger.error(
        { event: 'upstream_search_unauthorized', attempt: 2 },
        "the upstream refused the gateway's credentials",
      );
      throw new GatewayError('upstream_error', "the upstream refused the gateway's credentials");
    }
  }
  if (!isRefusal(reply)) return reply;
  if (reply.status === 429) {
    const retryAfterMs = boundedRetryAfter(reply.retryAfter, s.clock(), s.maxRetryAfterMs);
    logger.warn({ event: 'upstream_search_rate_limited', retryAfterMs }, 'upstream answered 429');
    throw new UpstreamRateLimitedError(retryAfterMs);
  }
  logger.warn({ event: 'upstream_search_failed', status: reply.status }, 'upstream search failed');
  throw new GatewayError('upstream_error', `the upstream answered ${reply.status}`);
}

const timedOut = (): GatewayError => new GatewayError('upstream_timeout', 'the upstream did not answer in time');

/** A status other than 200 comes back as the exchange itself; a 200 is already the answer. */
const isRefusal = (reply: UpstreamAnswer | UpstreamResponse): reply is UpstreamResponse => 'status' in reply;

// The token manager's own refresh has its own timeout and is shared with other callers; this
// lookup only stops waiting for it when its own deadline passes.
async function tokenBefore(s: Searcher, deadline: number, span: Span | undefined): Promise<string> {
  const remaining = deadline - s.clock();
  if (remaining <= 0) throw timedOut();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), remaining);
  });
  try {
    return await Promise.race([s.options.upstreamTokens.getToken(span), expiry]);
  } finally {
    clearTimeout(timer);
  }
}

/** The request's header fields: the token's, and the trace context of the exchange's span when there is one. */
function requestHeaders(s: Searcher, token: string, span: Span): Record<string, string> {
  if (s.headersOf.token !== token)
    s.headersOf = { token, headers: { authorization: `Bearer ${token}`, accept: 'application/json' } };
  return span.context === undefined ? s.headersOf.headers : { ...s.headersOf.headers, ...traceHeaders(span) };
}

/** One exchange of a search: its URL, the lookup's deadline and the span it goes under. */
interface Exchange {
  url: string;
  deadline: number;
  span: Span | undefined;
}

/**
 * One exchange, counted: a 200 with a JSON object is the search's answer; any other status is handed back as the
 * exchange for the caller to decide on; a malformed 200 or a failed transport is thrown.
 */
async function send(
  s: Searcher,
  exchange: Exchange,
  token: string,
  attempt: number,
): Promise<UpstreamAnswer | UpstreamResponse> {
  const { clock, telemetry, logger } = s;
  const { url, deadline } = exchange;
  const remaining = deadline - clock();
  if (remaining <= 0) throw timedOut();
  const started = clock();
  const seconds = (): number => (clock() - started) / 1000;
  const span = startUpstreamSpan(s.tracer, exchange.span, s.call);
  let res: UpstreamResponse;
  try {
    const headers = requestHeaders(s, token, span);
    res = await s.options.http.request({ method: 'GET', url, headers, timeoutMs: remaining });
  } catch (err) {
    const kind = err instanceof UpstreamTransportError ? err.kind : 'network';
    endUpstreamSpan(span, { errorType: kind });
    telemetry.upstreamCall('search', transportOutcome(kind), seconds());
    logger.warn({ event: 'upstream_search_failed', kind, attempt }, 'upstream search failed');
    if (kind === 'timeout')
      throw new GatewayError('upstream_timeout', 'the upstream did not answer in time', { cause: err });
    if (kind === 'too_large')
      throw new GatewayError('upstream_error', 'the upstream answered a body larger than the gateway accepts', {
        cause: err,
      });
    throw new GatewayError('upstream_error', 'the upstream could not be reached', { cause: err });
  }
  endUpstreamSpan(span, { status: res.status });
  if (res.status !== 200) {
    telemetry.upstreamCall('search', searchStatusOutcome(res.status), seconds());
    return res;
  }
  // The one parse of the body: it vouches for the JSON and says whether anything is listed; the string itself is
  // what callers and the cache receive.
  const json = jsonObject(res.body);
  telemetry.upstreamCall('search', json !== undefined ? 'ok' : 'malformed', seconds());
  if (json === undefined) {
    logger.warn(
      { event: 'upstream_search_malformed', status: 200 },
      'upstream search answered a body that is not a JSON object',
    );
    throw new GatewayError('upstream_error', 'the upstream answered a malformed body');
  }
  const contentType =
    res.contentType !== null && JSON_MEDIA_TYPE.test(res.contentType) ? res.contentType : 'application/json';
  if (s.resultsPath === undefined) return { body: res.body, contentType };
  const results = readPath(json, s.resultsPath);
  return { body: res.body, contentType, listed: Array.isArray(results) && results.length > 0 };
}

function jsonObject(body: string): object | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** A search's status as a metric outcome: 401 the token refused, 429 rate limited, 403 and other 4xx the request's fault. */
function searchStatusOutcome(status: number): UpstreamOutcome {
  if (status === 401) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'client_error';
  return 'server_error';
}
