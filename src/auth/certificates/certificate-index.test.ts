import { describe, expect, it } from 'vitest';
import { certificateClash, createCertificateIndex } from './certificate-index.js';
import { canonicalDn } from './distinguished-name.js';
import { thumbprintOf, type PeerCertificate } from './peer-certificate.js';

const cert = (over: Partial<PeerCertificate> = {}): PeerCertificate => ({
  sha256: 'ab'.repeat(32),
  subject: 'CN=pbx,O=Example\\, Inc.,C=CH',
  sanUris: ['spiffe://example.org/ns/voice/sa/pbx'],
  sanDns: ['pbx.voice.example'],
  problem: undefined,
  ...over,
});

describe('the certificate index', () => {
  it('finds a client by fingerprint (any case, with colons), subject, SAN URI or SAN DNS name', () => {
    const none = { sanUris: [], sanDns: [], subject: 'CN=other' };
    for (const selector of [
      { sha256: 'AB:'.repeat(31) + 'AB' },
      { subject: 'cn=pbx, o = Example\\, Inc., c=CH' },
      { san_uri: 'spiffe://example.org/ns/voice/sa/pbx' },
      { san_dns: 'PBX.voice.example' },
    ]) {
      const index = createCertificateIndex([{ id: 'pbx', certificates: [selector] }]);
      expect(index.match(cert()), JSON.stringify(selector)).toEqual({ clientId: 'pbx' });
      if ('sha256' in selector) continue;
      expect(index.match(cert(none)), JSON.stringify(selector)).toEqual({ refused: 'unmatched' });
    }
  });

  it('names no client for a certificate two clients each claim by a different selector', () => {
    const index = createCertificateIndex([
      { id: 'pbx', certificates: [{ san_uri: 'spiffe://example.org/ns/voice/sa/pbx' }] },
      { id: 'crm', certificates: [{ sha256: 'ab'.repeat(32) }] },
    ]);
    expect(index.match(cert())).toEqual({ refused: 'ambiguous' });
    expect(index.match(cert({ sha256: 'cd'.repeat(32) }))).toEqual({ clientId: 'pbx' });
  });

  it('finds a selector two clients list, by its place', () => {
    expect(
      certificateClash([
        { id: 'pbx', certificates: [{ subject: 'CN=pbx' }] },
        { id: 'crm', certificates: [{ san_dns: 'crm.example' }, { subject: 'cn=pbx' }] },
      ]),
    ).toBe('clients[1].certificates[1]: names a certificate another client lists too');
    expect(certificateClash([{ id: 'pbx', certificates: [{ subject: 'CN=pbx' }, { subject: 'CN=pbx' }] }])).toBe(
      undefined,
    );
  });
});

describe('distinguished names and thumbprints', () => {
  it('spells a name one way: types uppercased, spaces around separators dropped, escapes kept', () => {
    expect(canonicalDn(' cn = a\\,b + uid=7 , o=X ')).toBe('CN=a\\,b+UID=7,O=X');
    expect(canonicalDn('CN=trailing\\ ')).toBe('CN=trailing\\ ');
  });

  it("gives RFC 8705's x5t#S256: the base64url SHA-256 of the certificate", () => {
    const hex = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    expect(thumbprintOf(hex)).toBe(Buffer.from(hex, 'hex').toString('base64url'));
  });
});
