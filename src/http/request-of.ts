// A Hono request as the runtime-neutral search reads it (request/request-parts.ts): every route that searches hands
// over the same parts, so a rule the search applies to the request holds for every door alike.
import type { Context } from 'hono';
import type { AppEnv } from './app-env.js';
import type { RequestParts } from '../request/request-parts.js';
import type { PeerCertificate } from '../auth/certificates/peer-certificate.js';

export function requestOf(
  c: Context<AppEnv>,
  peerAddress: (c: Context) => string | undefined,
  peerCertificate?: (c: Context) => PeerCertificate | undefined,
): RequestParts {
  return {
    method: c.req.method,
    target: c.req.url,
    header: (name) => c.req.header(name),
    peerAddress: () => peerAddress(c),
    peerCertificate: () => peerCertificate?.(c),
    requestId: c.get('requestId'),
  };
}
