// The admin routes' client authentication as Hono middleware: the registered client of a gateway token
// (auth/client-authenticator.ts), or the refusal as the app's problem+json answer. The searches identify their
// caller through the search use case.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { BEARER_REALM, byCertificate, unauthorized, verifyBearer } from '../auth/client-authenticator.js';
import type { CertificateAuth } from '../auth/certificates/certificate-auth.js';
import type { PeerCertificate } from '../auth/certificates/peer-certificate.js';
import type { GatewayTokens } from '../auth/gateway-tokens.js';

export interface BearerAuthOptions {
  gatewayTokens: GatewayTokens;
  /** Without an Authorization field, a client certificate one client lists stands for its token. */
  clientCertificates: { of: (c: Context) => PeerCertificate | undefined; auth: CertificateAuth };
}

/** Requires a valid gateway token (RFC 6750) or client certificate and records its client: the admin routes. */
export function bearerAuth(options: BearerAuthOptions): MiddlewareHandler<AppEnv> {
  const { clientCertificates } = options;
  return async function bearerAuth(c, next) {
    const header = c.req.header('authorization');
    const source = { peerCertificate: () => clientCertificates.of(c) };
    const cert = header ? undefined : source.peerCertificate();
    const result = header
      ? await verifyBearer(options.gatewayTokens, header, source)
      : cert
        ? byCertificate(clientCertificates.auth, cert)
        : unauthorized(
            'A gateway access token is required: Authorization: Bearer <token> (POST /token/login).',
            BEARER_REALM,
          );
    if ('refused' in result) throw result.refused;
    c.set('clientId', result.clientId);
    await next();
  };
}
