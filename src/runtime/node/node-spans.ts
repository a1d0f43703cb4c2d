// The server span of a request Node's listener answers itself (the search door, the request rules' refusals, the HTTP
// server's own refusals): the same span and trace id in the problem body as the app's middleware gives its answers.
import { problemWithTraceId } from '../../base/errors.js';
import { clientAddress } from '../../limits/client-address.js';
import { endServerSpan, startServerSpan } from '../../observability/tracing/http-spans.js';
import type { Span } from '../../observability/tracing/span.js';
import type { Tracer } from '../../observability/tracing/tracer.js';
import type { RequestParts } from '../../request/request-parts.js';

/** What Node's listener traces its own answers with: the app's tracer and TRUST_PROXY_HOPS (the span's client). */
export interface NodeTracing {
  tracer: Tracer;
  trustProxyHops: number;
}

/**
 * A request's server span, named by `route` (undefined: no route matched); with tracing off only the caller's
 * context, and nothing made without one. `serverAddress`: the listener's own address where the request's `Host`
 * was refused (a refused field is never recorded); else the request's `Host` without its port.
 */
export function nodeServerSpan(
  tracing: NodeTracing,
  route: string | undefined,
  parts: RequestParts,
  serverAddress?: string,
): Span {
  const { tracer } = tracing;
  const traceparent = parts.header('traceparent');
  const tracestate = traceparent === undefined ? undefined : parts.header('tracestate');
  if (!tracer.enabled) return tracer.startServerSpan('', traceparent, tracestate);
  return startServerSpan(tracer, {
    method: parts.method,
    route,
    traceparent,
    tracestate,
    scheme: 'http',
    serverAddress: serverAddress ?? (parts.header('host') ?? '').replace(/:\d+$/, ''),
    clientAddress: clientAddress(parts.peerAddress(), parts.header('x-forwarded-for'), tracing.trustProxyHops),
  });
}

/** What a search answer adds to its span beyond its status. */
interface AnswerNotes {
  cacheStatus?: string | undefined;
  clientId?: string | undefined;
}

/**
 * Ends a request's span with its answer. Returns the problem body with the trace id in it when the answer is an
 * error and the request has a trace; undefined when the body stays as it is.
 */
export function endNodeServerSpan(
  span: Span,
  answer: { status: number; body: string },
  notes: AnswerNotes = {},
): string | undefined {
  const traceId = span.context?.traceId;
  if (traceId === undefined) return undefined;
  const problem = answer.status >= 400 ? problemWithTraceId(answer.body, traceId) : undefined;
  if (span.recording)
    endServerSpan(span, {
      status: answer.status,
      cacheStatus: notes.cacheStatus,
      clientId: notes.clientId,
      problemType: problem?.type,
    });
  return problem?.body;
}
