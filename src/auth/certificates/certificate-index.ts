// Which client a certificate is: each client of the clients file lists the certificates it is known by
// (`certificates`: a SHA-256 fingerprint, an RFC 4514 subject, a SAN URI such as a SPIFFE id, a SAN DNS name); the
// index answers a verified certificate with the one client it names. A selector two clients list is refused when the
// file is read; a certificate that several selectors of different clients match names no client (it is ambiguous).
import * as z from 'zod/mini';
import { canonicalDn } from './distinguished-name.js';
import { fingerprintOf, type PeerCertificate } from './peer-certificate.js';

const FINGERPRINT = /^(?:[0-9A-Fa-f]{64}|(?:[0-9A-Fa-f]{2}:){31}[0-9A-Fa-f]{2})$/;

/** One entry of a client's `certificates` in the clients file (config/clients-file.schema.json). */
export const CERTIFICATE_SELECTOR = z.union([
  z.strictObject({
    sha256: z.string().check(z.regex(FINGERPRINT, 'must be 64 hex digits (colons between bytes allowed)')),
  }),
  z.strictObject({
    subject: z.string().check(z.regex(/^[^=]+=.*$/, 'must be an RFC 4514 name: CN=…,O=…'), z.maxLength(1024)),
  }),
  z.strictObject({ san_uri: z.string().check(z.regex(/^[A-Za-z][A-Za-z0-9+.-]*:\S{1,2000}$/, 'must be a URI')) }),
  z.strictObject({
    san_dns: z.string().check(z.regex(/^[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,126}$/, 'must be a DNS name')),
  }),
]);

export type CertificateSelector = z.infer<typeof CERTIFICATE_SELECTOR>;

/** The one key a selector is looked up by. */
function keyOf(selector: CertificateSelector): string {
  if ('sha256' in selector) return `sha256:${fingerprintOf(selector.sha256)}`;
  if ('subject' in selector) return `subject:${canonicalDn(selector.subject)}`;
  if ('san_uri' in selector) return `uri:${selector.san_uri}`;
  return `dns:${selector.san_dns.toLowerCase()}`;
}

/** The keys a certificate is known by, the same way. */
function keysOfCertificate(cert: PeerCertificate): string[] {
  const keys = [`sha256:${cert.sha256}`];
  if (cert.subject !== undefined) keys.push(`subject:${canonicalDn(cert.subject)}`);
  for (const uri of cert.sanUris) keys.push(`uri:${uri}`);
  for (const dns of cert.sanDns) keys.push(`dns:${dns.toLowerCase()}`);
  return keys;
}

interface ClientCertificates {
  id: string;
  certificates?: readonly CertificateSelector[] | undefined;
}

/** `clients[i].certificates[j]: …` where a selector names a certificate another client listed first; else undefined. */
export function certificateClash(clients: readonly ClientCertificates[]): string | undefined {
  const owner = new Map<string, string>();
  for (const [i, client] of clients.entries())
    for (const [j, selector] of (client.certificates ?? []).entries()) {
      const key = keyOf(selector);
      const first = owner.get(key);
      if (first !== undefined && first !== client.id)
        return `clients[${i}].certificates[${j}]: names a certificate another client lists too`;
      owner.set(key, client.id);
    }
  return undefined;
}

export type CertificateMatch = { clientId: string } | { refused: 'unmatched' | 'ambiguous' };

export interface CertificateIndex {
  match(cert: PeerCertificate): CertificateMatch;
  /** Whether any client lists a certificate: without one, no certificate is looked up. */
  readonly size: number;
}

export function createCertificateIndex(clients: readonly ClientCertificates[]): CertificateIndex {
  const owner = new Map<string, string>();
  for (const client of clients) for (const s of client.certificates ?? []) owner.set(keyOf(s), client.id);
  return {
    size: owner.size,
    match(cert) {
      const found = new Set<string>();
      for (const key of keysOfCertificate(cert)) {
        const id = owner.get(key);
        if (id !== undefined) found.add(id);
      }
      if (found.size === 0) return { refused: 'unmatched' };
      if (found.size > 1) return { refused: 'ambiguous' };
      return { clientId: [...found][0]! };
    },
  };
}
