// The client certificate of a request on Node, as the core reads it (auth/certificates/peer-certificate.ts): the one
// the TLS connection presented, verified by OpenSSL against TLS_CLIENT_CA_FILE (and its CRL) during the handshake.
// Read once per connection: a connection keeps its certificate, and its requests share what was read.
import type { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { fingerprintOf, type PeerCertificate } from '../../auth/certificates/peer-certificate.js';

/** The longest chain accepted, the client's own certificate and the CA included: a longer one is refused. */
const MAX_CHAIN_LENGTH = 5;

/** OpenSSL's verification errors in a word the log and the metrics can carry. */
const PROBLEMS: Record<string, string> = {
  CERT_HAS_EXPIRED: 'expired',
  CERT_NOT_YET_VALID: 'not_yet_valid',
  CERT_REVOKED: 'revoked',
  UNABLE_TO_GET_ISSUER_CERT: 'unknown_ca',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unknown_ca',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unknown_ca',
  SELF_SIGNED_CERT_IN_CHAIN: 'unknown_ca',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'unknown_ca',
  CERT_CHAIN_TOO_LONG: 'chain_too_long',
  UNABLE_TO_GET_CRL: 'no_crl',
  CRL_HAS_EXPIRED: 'crl_expired',
};

const problemOf = (code: string | undefined): string => (code && PROBLEMS[code]) ?? 'not_verified';

/** `DNS:a.example, URI:spiffe://…, IP Address:…` (a value with a comma or quote is a JSON string): by kind. */
function subjectAltNames(text: string | undefined): { uris: string[]; dns: string[] } {
  const uris: string[] = [];
  const dns: string[] = [];
  for (const m of (text ?? '').matchAll(/(DNS|URI):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const raw = m[2]!;
    const value = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
    (m[1] === 'URI' ? uris : dns).push(value);
  }
  return { uris, dns };
}

/** The core's view of an X.509 certificate; `problem` says why it is not verified, if it is not. */
export function certificateOf(x509: X509Certificate, problem: string | undefined): PeerCertificate {
  const san = subjectAltNames(x509.subjectAltName);
  return {
    sha256: fingerprintOf(x509.fingerprint256),
    // Node writes the subject one attribute per line, the root-most first; RFC 4514 the other way round.
    subject: x509.subject.split('\n').reverse().join(','),
    sanUris: san.uris,
    sanDns: san.dns,
    problem,
  };
}

/** How many certificates the chain holds, up to the self-signed CA (counted to one past the bound at most). */
function chainLength(leaf: DetailedPeerCertificate): number {
  let cert = leaf;
  let length = 1;
  while (cert.issuerCertificate && cert.issuerCertificate !== cert && length <= MAX_CHAIN_LENGTH) {
    cert = cert.issuerCertificate;
    length++;
  }
  return length;
}

function readSocket(socket: TLSSocket): PeerCertificate | undefined {
  // The chain first: once Node has handed out the peer's certificate otherwise, its issuers are no longer linked.
  const chain = socket.getPeerCertificate(true);
  const x509 = socket.getPeerX509Certificate();
  if (x509 === undefined) return undefined;
  const code = (socket.authorizationError as (Error & { code?: string }) | string | undefined) ?? undefined;
  const problem = socket.authorized
    ? chainLength(chain) > MAX_CHAIN_LENGTH
      ? 'chain_too_long'
      : undefined
    : problemOf(typeof code === 'string' ? code : (code?.code ?? code?.message));
  return certificateOf(x509, problem);
}

const read = new WeakMap<TLSSocket, PeerCertificate | null>();

/** The certificate the connection presented, or undefined (none, or not a TLS connection). */
export function socketCertificate(socket: TLSSocket): PeerCertificate | undefined {
  if (socket.encrypted !== true) return undefined;
  let cert = read.get(socket);
  if (cert === undefined) {
    cert = readSocket(socket) ?? null;
    read.set(socket, cert);
  }
  return cert ?? undefined;
}
