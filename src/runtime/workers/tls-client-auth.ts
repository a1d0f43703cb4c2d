// The client certificate of a request on Workers: Cloudflare's mutual TLS (API Shield) puts what the edge verified in
// `request.cf.tlsClientAuth`; the gateway reads it as the core's certificate (auth/certificates/peer-certificate.ts).
// Cloudflare gives the fingerprint and the subject, not the SANs: on Workers a client is known by `sha256` or `subject`.
import { fingerprintOf, type PeerCertificate } from '../../auth/certificates/peer-certificate.js';

/** The fields of `request.cf.tlsClientAuth` the gateway reads (Cloudflare gives them as strings). */
interface TlsClientAuth {
  certPresented?: string;
  certVerified?: string;
  certRevoked?: string;
  certFingerprintSHA256?: string;
  certSubjectDNRFC2253?: string;
}

/** Cloudflare's `certVerified` values in the words the core logs. */
const PROBLEMS: Record<string, string> = { 'FAILED:certificate has expired': 'expired' };

/** The certificate of a request, or undefined when none was presented. */
export function tlsClientAuthCertificate(request: Request): PeerCertificate | undefined {
  const auth = (request as { cf?: { tlsClientAuth?: TlsClientAuth } }).cf?.tlsClientAuth;
  if (auth === undefined || auth.certPresented !== '1' || !auth.certFingerprintSHA256) return undefined;
  const verified = auth.certVerified === 'SUCCESS' && auth.certRevoked !== '1';
  return {
    sha256: fingerprintOf(auth.certFingerprintSHA256),
    subject: auth.certSubjectDNRFC2253 || undefined,
    sanUris: [],
    sanDns: [],
    problem: verified
      ? undefined
      : auth.certRevoked === '1'
        ? 'revoked'
        : (PROBLEMS[auth.certVerified ?? ''] ?? 'not_verified'),
  };
}
