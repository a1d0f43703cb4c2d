// Where the requests Node's listener answers itself arrive (the search door, the request rules' refusals, the HTTP
// server's own refusals), for their server spans (observability/served-request.ts), built as the app builds its own.
import { clientAddress } from '../../limits/client-address.js';
import type { Arrival } from '../../observability/served-request.js';
import type { Tracer } from '../../observability/tracing/tracer.js';
import type { RequestParts } from '../../request/request-parts.js';

/** What Node's listener traces its own answers with: the app's tracer and TRUST_PROXY_HOPS (the span's client). */
export interface NodeTracing {
  tracer: Tracer;
  trustProxyHops: number;
}

/**
 * Node's requests arrive over plain HTTP. `listenerAddress`: the server address of a request whose `Host` was
 * refused (a refused field is never recorded); else the request's `Host` without its port, in lower case (as the
 * app reads it from its URL).
 */
export function nodeArrival(tracing: NodeTracing, listenerAddress?: string): Arrival<RequestParts> {
  return {
    scheme: () => 'http',
    serverAddress: (parts) => listenerAddress ?? (parts.header('host') ?? '').replace(/:\d+$/, '').toLowerCase(),
    clientAddress: (parts) =>
      clientAddress(parts.peerAddress(), parts.header('x-forwarded-for'), tracing.trustProxyHops),
  };
}
