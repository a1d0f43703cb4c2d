// The spans of HTTP exchanges under OpenTelemetry's stable HTTP semantic conventions: a request's server span, an
// upstream call's client span, and the header fields that carry a span's context to the upstream. Names take route
// templates only; a path is recorded with every segment that could hold a number written `REDACTED`, an upstream URL
// with its query's value so; what a caller sends (its User-Agent, its path) is cut to MAX_TEXT characters.
import { PropagatingSpan, type Span } from './span.js';
import { formatTraceparent, incomingContext } from './trace-context.js';
import type { Tracer } from './tracer.js';

/** Methods named as they are; any other is `_OTHER` (semantic conventions, `http.request.method`). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** How a redacted value is written, as the semantic conventions write one in `url.full`. */
const REDACTED = 'REDACTED';

/** The most characters of a value a caller sends recorded on a span (a User-Agent, a path, a method). */
const MAX_TEXT = 256;

/** What a server span is started with: the request line's method, the route it matched, the caller's context. */
export interface IncomingRequest {
  readonly method: string;
  /** The matched route's template (`/v2/contacts/search`), undefined when no route matched. */
  readonly route: string | undefined;
  readonly traceparent: string | null | undefined;
  readonly tracestate: string | null | undefined;
}

/** Where a request arrived and from whom: read for a recorded span only. */
export interface ArrivedRequest {
  readonly scheme: 'http' | 'https';
  /** The request target's path as sent, without its query. */
  readonly path: string;
  /** The host the request came to, without its port. */
  readonly serverAddress: string;
  /** The port it came to: the `Host`'s, else the scheme's. */
  readonly serverPort: number;
  /** The HTTP version (`1.1`, `2`), where the runtime tells it. */
  readonly protocolVersion: string | undefined;
  readonly userAgent: string | undefined;
  /** The client address the gateway trusts (TRUST_PROXY_HOPS), never a forwarded header's raw value. */
  readonly clientAddress: string | undefined;
}

/** How a request ended, for its server span. */
export interface ServerOutcome {
  readonly status: number;
  /** What failed when the answer is a 5xx or no answer at all (`timeout`, an error's name); else the status. */
  readonly errorType?: string;
  /** The cache's result (hit, miss, stale, shared, coalesced) on a search. */
  readonly cacheStatus?: string;
  /** The registered client id or `console`, once known. */
  readonly clientId?: string;
  /** The problem type's URI of a refusal. */
  readonly problemType?: string;
}

const methodOf = (method: string) => (KNOWN_METHODS.has(method) ? method : '_OTHER');

const bounded = (text: string) => (text.length > MAX_TEXT ? text.slice(0, MAX_TEXT) : text);

// A segment with three digits or more could carry a telephone number (`/admin/cache/+442079460011`, a caller's
// mistake): written REDACTED whole, as are the characters past MAX_TEXT. `/v2` keeps its one digit.
const NUMBER_LIKE_SEGMENT = /[^/]*\d[^/\d]*\d[^/\d]*\d[^/]*/g;

/** The last path redacted and how: a door's requests repeat a handful of paths. */
const lastRedacted = { path: '', redacted: '' };

/** A request's path as `url.path` records it: no segment that could hold a number, at most MAX_TEXT characters. */
function redactedPath(path: string): string {
  if (path !== lastRedacted.path) {
    lastRedacted.redacted = bounded(path.replace(NUMBER_LIKE_SEGMENT, REDACTED));
    lastRedacted.path = path;
  }
  return lastRedacted.redacted;
}

/** A span name's method part: an unknown method is `HTTP` there. */
const nameOf = (method: string) => (method === '_OTHER' ? 'HTTP' : method);

/** The last server span name made: a door's requests repeat a handful of methods and routes. */
const lastName = { method: '', route: undefined as string | undefined, name: '' };

/** `METHOD route` (`GET /v2/contacts/search`), or `METHOD` when no route matched. */
function serverSpanName(method: string, route: string | undefined): string {
  if (method !== lastName.method || route !== lastName.route) {
    lastName.name = route === undefined ? nameOf(method) : `${nameOf(method)} ${route}`;
    [lastName.method, lastName.route] = [method, route];
  }
  return lastName.name;
}

/**
 * A request's server span, named `METHOD route` (`GET /v2/contacts/search`), or `METHOD` when no route matched.
 * `arrived` is asked only when the span is recorded: a trace the sampler leaves out reads nothing more of the request.
 */
export function startServerSpan(tracer: Tracer, request: IncomingRequest, arrived: () => ArrivedRequest): Span {
  const method = methodOf(request.method);
  const span = tracer.startServerSpan(serverSpanName(method, request.route), request.traceparent, request.tracestate);
  if (!span.recording) return span;
  span.setAttribute('http.request.method', method);
  if (method === '_OTHER') span.setAttribute('http.request.method_original', bounded(request.method));
  if (request.route !== undefined) span.setAttribute('http.route', request.route);
  const at = arrived();
  span.setAttribute('url.path', redactedPath(at.path));
  span.setAttribute('url.scheme', at.scheme);
  span.setAttribute('server.address', bounded(at.serverAddress));
  span.setAttribute('server.port', at.serverPort);
  if (at.protocolVersion !== undefined) span.setAttribute('network.protocol.version', at.protocolVersion);
  if (at.userAgent !== undefined) span.setAttribute('user_agent.original', bounded(at.userAgent));
  if (at.clientAddress !== undefined) span.setAttribute('client.address', at.clientAddress);
  return span;
}

/** Records how the request ended and ends its span; a server span is an error only for a 5xx. */
export function endServerSpan(span: Span, outcome: ServerOutcome): void {
  if (span.recording) {
    span.setAttribute('http.response.status_code', outcome.status);
    if (outcome.cacheStatus !== undefined) span.setAttribute('cache.status', outcome.cacheStatus);
    if (outcome.clientId !== undefined) span.setAttribute('gateway.client.id', outcome.clientId);
    if (outcome.problemType !== undefined) span.setAttribute('gateway.problem.type', outcome.problemType);
    if (outcome.status >= 500 || outcome.errorType !== undefined) {
      span.setAttribute('error.type', outcome.errorType ?? String(outcome.status));
      span.setStatus({ code: 'error' });
    }
  }
  span.end();
}

export interface UpstreamCall {
  readonly method: string;
  /** The upstream URL's template (`/v2/contacts/search`, `/oauth/token`): the span's name, never the real target. */
  readonly urlTemplate: string;
  /** The URL called, every query value and any credentials written REDACTED (`...?what=REDACTED`). */
  readonly urlFull: string;
  readonly serverAddress: string;
  readonly serverPort: number;
}

/**
 * An upstream call to `baseUrl`'s server at `urlTemplate`, with `query` the names its query carries (the values,
 * a number among them, are never recorded): the port is the scheme's when the URL has none.
 */
export function upstreamCall(
  method: string,
  baseUrl: string,
  urlTemplate: string,
  query: readonly string[] = [],
): UpstreamCall {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${urlTemplate}`);
  if (url.username !== '' || url.password !== '') [url.username, url.password] = [REDACTED, REDACTED];
  url.search = query.map((name) => `${name}=${REDACTED}`).join('&');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { method, urlTemplate, urlFull: url.href, serverAddress: url.hostname, serverPort: port };
}

/** An upstream call's client span under `parent`, named `METHOD template`. */
export function startUpstreamSpan(tracer: Tracer, parent: Span | undefined, call: UpstreamCall): Span {
  const method = methodOf(call.method);
  const span = tracer.startSpan(`${nameOf(method)} ${call.urlTemplate}`, parent, {
    kind: 'client',
  });
  if (!span.recording) return span;
  span.setAttribute('http.request.method', method);
  span.setAttribute('url.template', call.urlTemplate);
  span.setAttribute('url.full', call.urlFull);
  span.setAttribute('server.address', call.serverAddress);
  span.setAttribute('server.port', call.serverPort);
  return span;
}

/** Ends an upstream call's span with the status it answered, or what failed (`timeout`, an error's name). */
export function endUpstreamSpan(span: Span, outcome: { status: number } | { errorType: string }): void {
  if (span.recording) {
    if ('status' in outcome) span.setAttribute('http.response.status_code', outcome.status);
    const failed =
      'errorType' in outcome ? outcome.errorType : outcome.status >= 400 ? String(outcome.status) : undefined;
    if (failed !== undefined) {
      span.setAttribute('error.type', failed);
      span.setStatus({ code: 'error' });
    }
  }
  span.end();
}

/** A span's context as its header fields, `traceparent` and `tracestate` (none without a context). */
export type TraceCarrier = Readonly<Record<string, string>>;

/**
 * The `traceparent` (and `tracestate`) an upstream request carries, naming `span` as its parent; none without
 * context. With tracing off, the caller's fields as they came; under a host's SDK, its propagator's.
 */
export function traceHeaders(span: Span): TraceCarrier {
  if (span.carried !== undefined) return span.carried;
  const context = span.context;
  if (context === undefined) return {};
  const traceparent = formatTraceparent(context);
  return context.traceState === undefined ? { traceparent } : { traceparent, tracestate: context.traceState };
}

/**
 * The span whose context a caller in another isolate sent ({@link traceHeaders} there, an RPC argument here): spans
 * started under it continue the caller's trace. Undefined when the context is absent or invalid.
 */
export function remoteSpan(trace: TraceCarrier | undefined): Span | undefined {
  const context = incomingContext(trace?.['traceparent'], trace?.['tracestate']);
  return context === undefined ? undefined : new PropagatingSpan(context, true);
}
