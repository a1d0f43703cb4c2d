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
    path: (parts) => pathOf(parts.target),
    serverAddress: (parts) => listenerAddress ?? (parts.header('host') ?? '').replace(/:\d+$/, '').toLowerCase(),
    serverPort: (parts) => {
      const port = listenerAddress === undefined ? /:(\d{1,5})$/.exec(parts.header('host') ?? '')?.[1] : undefined;
      return port === undefined ? undefined : Number(port);
    },
    // The search door's parts leave the version on the request, read here only with tracing on.
    protocolVersion: (parts) => parts.httpVersion ?? (parts as { req?: { httpVersion?: string } }).req?.httpVersion,
    clientAddress: (parts) =>
      clientAddress(parts.peerAddress(), parts.header('x-forwarded-for'), tracing.trustProxyHops),
  };
}

/** The path of a request target: origin-form (`/path?query`) as it is, absolute-form (`http://host/path`) parsed. */
function pathOf(target: string): string {
  if (target.startsWith('/')) return target.split('?', 1)[0]!;
  return URL.canParse(target) ? new URL(target).pathname : target.split('?', 1)[0]!;
}
