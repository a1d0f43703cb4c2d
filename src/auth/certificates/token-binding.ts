// Certificate-bound access tokens (RFC 8705 section 3): a token issued to a client authenticated by its certificate
// carries `cnf: {"x5t#S256": …}`, and is accepted only over a connection that presents that certificate, verified.
import { thumbprintOf, type PeerCertificate } from './peer-certificate.js';

/** The `cnf` claim binding a token to `cert` (RFC 8705 section 3.1). */
export const confirmationOf = (cert: PeerCertificate): { 'x5t#S256': string } => ({
  'x5t#S256': thumbprintOf(cert.sha256),
});

/** The thumbprint a token's claims bind it to; undefined for an unbound token (or a `cnf` of another kind). */
export function boundThumbprint(claims: Record<string, unknown>): string | undefined {
  const cnf = claims.cnf;
  if (typeof cnf !== 'object' || cnf === null) return undefined;
  const thumbprint = (cnf as Record<string, unknown>)['x5t#S256'];
  return typeof thumbprint === 'string' ? thumbprint : undefined;
}

/** What gives a request's client certificate, when asked (a request's parts): nothing is read for an unbound token. */
export interface CertificateSource {
  peerCertificate?(): PeerCertificate | undefined;
}

/** Whether a token bound to `thumbprint` (if it is bound at all) may be used with the request's certificate. */
export function presentsBinding(thumbprint: string | undefined, source: CertificateSource | undefined): boolean {
  if (thumbprint === undefined) return true;
  const cert = source?.peerCertificate?.();
  return cert !== undefined && cert.problem === undefined && thumbprintOf(cert.sha256) === thumbprint;
}
