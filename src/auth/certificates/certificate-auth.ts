// A request's client by its certificate alone (no Authorization field): a verified certificate that one client lists
// is that client; any other is refused in words that name no client, with one log line saying why for the operator
// (the certificate's fingerprint, which names no secret, so that it can be added to the clients file).
import type { Logger } from '../../observability/logger.js';
import type { CertificateMatch } from './certificate-index.js';
import type { PeerCertificate } from './peer-certificate.js';

type CertificateVerdict = { clientId: string } | { refused: string };

export type CertificateAuth = (cert: PeerCertificate) => CertificateVerdict;

const DETAILS = {
  unverified: 'The client certificate is not accepted: it does not verify against the client CA.',
  unmatched: 'The client certificate is not registered for any client.',
  ambiguous: 'The client certificate matches more than one registered client.',
};

export function createCertificateAuth(options: {
  match: (cert: PeerCertificate) => CertificateMatch;
  logger: Logger;
}): CertificateAuth {
  const { match, logger } = options;
  return function certificateAuth(cert) {
    const verdict: CertificateMatch | { refused: 'unverified' } =
      cert.problem === undefined ? match(cert) : { refused: 'unverified' };
    if ('clientId' in verdict) return verdict;
    logger.warn(
      { event: 'client_certificate_refused', reason: cert.problem ?? verdict.refused, certSha256: cert.sha256 },
      'client certificate refused',
    );
    return { refused: DETAILS[verdict.refused] };
  };
}
