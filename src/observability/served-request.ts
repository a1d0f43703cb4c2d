// What every door writes of a request it answers, built here once: its server span (observability/tracing/
// http-spans.ts) and its finished-request record (request-recorder.ts). The app's middleware (Hono, on Node and
// Workers), Node's search door and Node's own refusals all call these, so their spans and log lines are the same.
import { problemWithTraceId } from '../base/errors.js';
import type { FinishedRequest } from './request-recorder.js';
import { endServerSpan, startServerSpan } from './tracing/http-spans.js';
import type { Span } from './tracing/span.js';
import type { Tracer } from './tracing/tracer.js';

/** A request as every door holds it: Node's raw request's parts, Hono's request. */
export interface Arriving {
  readonly method: string;
  /** A header field by lower-case name, repeated fields joined with ", ". */
  header(name: string): string | undefined;
}

/** Where a request arrived, as its door tells it. */
interface Arrived {
  readonly scheme: 'http' | 'https';
  /** The request target's path as sent, without its query. */
  readonly path: string;
  /** The host the request came to, without its port (never a `Host` the gateway refused). */
  readonly serverAddress: string;
  /** The port it came to, when the `Host` or the URL names one; else the scheme's is recorded. */
  readonly serverPort: number | undefined;
  /** The HTTP version (`1.1`, `2`), where the runtime tells it. */
  readonly protocolVersion: string | undefined;
  /** The client address the gateway trusts (TRUST_PROXY_HOPS). */
  readonly clientAddress: string | undefined;
}

/** How a door reads where its request `at` arrived: asked once, for a recorded span only. */
export type Arrival<R> = (at: R) => Arrived;

/**
 * A request's server span, named by `route` (undefined: no route matched), continuing the caller's trace; with
 * tracing off only the caller's context, and nothing made without one. The arrival is read for a recorded span only.
 */
export function openServerSpan<R>(
  tracer: Tracer,
  request: Arriving,
  route: string | undefined,
  arrival: Arrival<R>,
  at: R,
): Span {
  const traceparent = request.header('traceparent');
  const tracestate = traceparent === undefined ? undefined : request.header('tracestate');
  if (!tracer.enabled) return tracer.startServerSpan('', traceparent, tracestate);
  return startServerSpan(tracer, { method: request.method, route, traceparent, tracestate }, () => {
    const { scheme, path, serverAddress, serverPort, protocolVersion, clientAddress } = arrival(at);
    return {
      scheme,
      path,
      serverAddress,
      serverPort: serverPort ?? (scheme === 'https' ? 443 : 80),
      protocolVersion,
      userAgent: request.header('user-agent'),
      clientAddress,
    };
  });
}

/** How a request was answered, for its span and its record. */
export interface Answered {
  requestId: string;
  status: number;
  /** What failed when no answer was given (`exception`). */
  errorType?: string | undefined;
  clientId?: string | undefined;
  lookup?: FinishedRequest['lookup'];
}

/** Whether an answer's body goes to {@link closeServerSpan}: a problem's, when the request has a trace. */
export const takesTraceId = (span: Span, contentType: string | null | undefined): boolean =>
  span.context !== undefined && contentType === 'application/problem+json';

/**
 * Ends a request's span with its answer. `problem`: the body of an answer {@link takesTraceId} chose. Returns that
 * body with the trace id in it; undefined when the body stays as it is.
 */
export function closeServerSpan(span: Span, answered: Answered, problem?: string): string | undefined {
  const traceId = span.context?.traceId;
  const traced = traceId === undefined || problem === undefined ? undefined : problemWithTraceId(problem, traceId);
  if (span.recording)
    endServerSpan(span, {
      status: answered.status,
      errorType: answered.errorType,
      cacheStatus: answered.lookup?.cache,
      clientId: answered.clientId,
      problemType: traced?.type,
    });
  else span.end();
  return traced?.body;
}

/** The finished-request record of every door: `route` is the template answered or `unmatched`. */
export const finishedRequest = (
  request: Arriving,
  route: string,
  answered: Answered,
  elapsedMs: number,
  span: Span | undefined,
): FinishedRequest => ({
  requestId: answered.requestId,
  method: request.method,
  route,
  status: answered.status,
  elapsedMs,
  clientId: answered.clientId,
  lookup: answered.lookup,
  span,
});
