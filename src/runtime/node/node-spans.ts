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

/** A `Host` field as a span records it: its host in lower case without the port, and the port it names. */
interface HostParts {
  readonly field: string;
  readonly address: string;
  readonly port: number | undefined;
}

function hostParts(field: string): HostParts {
  const port = /:(\d{1,5})$/.exec(field)?.[1];
  return {
    field,
    address: field.replace(/:\d+$/, '').toLowerCase(),
    port: port === undefined ? undefined : Number(port),
  };
}

/**
 * Node's requests arrive over plain HTTP. `listenerAddress`: the server address of a request whose `Host` was
 * refused (a refused field is never recorded); else the request's `Host` without its port, in lower case (as the
 * app reads it from its URL). The last `Host` read and the last peer's canonical address are kept: a listener's
 * requests name a handful of hosts and come over kept-alive connections from a handful of peers.
 */
export function nodeArrival(tracing: NodeTracing, listenerAddress?: string): Arrival<RequestParts> {
  let host = hostParts('');
  const hostOf = (parts: RequestParts): HostParts => {
    const field = parts.header('host') ?? '';
    if (field !== host.field) host = hostParts(field);
    return host;
  };
  const peer = { raw: '', client: '' };
  const clientOf = (parts: RequestParts): string | undefined => {
    const forwarded = tracing.trustProxyHops === 0 ? undefined : parts.header('x-forwarded-for');
    const raw = parts.peerAddress();
    if (forwarded !== undefined || raw === undefined) return clientAddress(raw, forwarded, tracing.trustProxyHops);
    if (raw !== peer.raw) [peer.raw, peer.client] = [raw, clientAddress(raw, undefined, 0)!];
    return peer.client;
  };
  return (parts) => ({
    scheme: 'http',
    path: pathOf(parts.target),
    serverAddress: listenerAddress ?? hostOf(parts).address,
    serverPort: listenerAddress === undefined ? hostOf(parts).port : undefined,
    // The search door's parts leave the version on the request, read here only for a recorded span.
    protocolVersion: parts.httpVersion ?? (parts as { req?: { httpVersion?: string } }).req?.httpVersion,
    clientAddress: clientOf(parts),
  });
}

/** The path of a request target: origin-form (`/path?query`) as it is, absolute-form (`http://host/path`) parsed. */
function pathOf(target: string): string {
  const query = target.indexOf('?');
  if (target.startsWith('/')) return query === -1 ? target : target.slice(0, query);
  return URL.canParse(target) ? new URL(target).pathname : target.split('?', 1)[0]!;
}
