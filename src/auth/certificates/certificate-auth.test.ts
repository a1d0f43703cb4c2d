import { describe, expect, it } from 'vitest';
import { captureLogger } from '../../../test/helpers/recorders.js';
import { createCertificateAuth } from './certificate-auth.js';
import { createCertificateIndex } from './certificate-index.js';
import type { PeerCertificate } from './peer-certificate.js';

const cert = (over: Partial<PeerCertificate> = {}): PeerCertificate => ({
  sha256: 'ab'.repeat(32),
  subject: 'CN=pbx',
  sanUris: [],
  sanDns: [],
  problem: undefined,
  ...over,
});

describe('a client by its certificate', () => {
  const index = createCertificateIndex([{ id: 'pbx', certificates: [{ subject: 'CN=pbx' }] }]);

  it('is the client a verified certificate names, with no log line', () => {
    const logger = captureLogger();
    expect(createCertificateAuth({ match: index.match, logger })(cert())).toEqual({ clientId: 'pbx' });
    expect(logger.lines).toEqual([]);
  });

  it('refuses an unverified or unmatched certificate naming no client, one log line each with the fingerprint', () => {
    const logger = captureLogger();
    const auth = createCertificateAuth({ match: index.match, logger });
    const refusals = [auth(cert({ problem: 'expired' })), auth(cert({ subject: 'CN=stranger' }))];
    expect(refusals.map((r) => ('refused' in r ? r.refused : r.clientId))).toEqual([
      'The client certificate is not accepted: it does not verify against the client CA.',
      'The client certificate is not registered for any client.',
    ]);
    expect(logger.lines.map((l) => [l.fields.reason, l.fields.certSha256])).toEqual([
      ['expired', 'ab'.repeat(32)],
      ['unmatched', 'ab'.repeat(32)],
    ]);
  });
});
