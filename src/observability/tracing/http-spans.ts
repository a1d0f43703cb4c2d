// The spans of HTTP exchanges under OpenTelemetry's stable HTTP semantic conventions: a request's server span, an
// upstream call's client span, and the header fields that carry a span's context to the upstream. Names and
// attributes take route templates and closed sets only, never a path or query (a number would be in them).
import { PropagatingSpan, type Span } from './span.js';
import { formatTraceparent, incomingContext } from './trace-context.js';
import type { Tracer } from './tracer.js';

/** Methods named as they are; any other is `_OTHER` (semantic conventions, `http.request.method`). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

export interface IncomingRequest {
  readonly method: string;
  /** The matched route's template (`/v2/contacts/search`), undefined when no route matched. */
  readonly route: string | undefined;
  readonly traceparent: string | null | undefined;
  readonly tracestate: string | null | undefined;
  readonly scheme: 'http' | 'https';
  /** The host the request came to, without its port. */
  readonly serverAddress: string;
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

/** A span name's method part: an unknown method is `HTTP` there. */
const nameOf = (method: string) => (method === '_OTHER' ? 'HTTP' : method);

/** A request's server span, named `METHOD route` (`GET /v2/contacts/search`), or `METHOD` when no route matched. */
export function startServerSpan(tracer: Tracer, request: IncomingRequest): Span {
  const method = methodOf(request.method);
  const name = request.route === undefined ? nameOf(method) : `${nameOf(method)} ${request.route}`;
  const span = tracer.startServerSpan(name, request.traceparent, request.tracestate);
  if (!span.recording) return span;
  span.setAttribute('http.request.method', method);
  if (request.route !== undefined) span.setAttribute('http.route', request.route);
  span.setAttribute('url.scheme', request.scheme);
  span.setAttribute('server.address', request.serverAddress);
  if (request.clientAddress !== undefined) span.setAttribute('client.address', request.clientAddress);
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
  readonly serverAddress: string;
  readonly serverPort: number;
}

/** An upstream call to `baseUrl`'s server, named by `urlTemplate`: the port is the scheme's when the URL has none. */
export function upstreamCall(method: string, baseUrl: string, urlTemplate: string): UpstreamCall {
  const url = new URL(baseUrl);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { method, urlTemplate, serverAddress: url.hostname, serverPort: port };
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

/** The `traceparent` (and `tracestate`) an upstream request carries, naming `span` as its parent; none without context. */
export function traceHeaders(span: Span): Record<string, string> {
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
