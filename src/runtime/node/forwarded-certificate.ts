// A client certificate a TLS-terminating proxy forwards in a header (TLS_CLIENT_CERT_HEADER), believed only on a
// connection from the proxy itself (TLS_CLIENT_CERT_HEADER_FROM: the socket's peer, which no header can forge) and
// from the hop TRUST_PROXY_HOPS trusts: Envoy's X-Forwarded-Client-Cert (the element the outermost trusted hop wrote: `Hash=`,
// `Cert=`, `URI=`, `DNS=`, `Subject=`), or a URL-encoded PEM as nginx's `$ssl_client_escaped_cert` and Traefik send
// it. A forwarded PEM is verified here against TLS_CLIENT_CA_FILE (issuer, signature, validity); an XFCC element
// without one is the proxy's word, which must at least name the certificate's hash.
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIPv4 } from 'node:net';
import { LRUCache } from 'lru-cache';
import { fingerprintOf, type PeerCertificate } from '../../auth/certificates/peer-certificate.js';
import type { Logger } from '../../observability/logger.js';
import { certificateOf } from './tls-peer-certificate.js';

/** The longest header value read: a certificate of a few KiB URL-encoded, with room for an XFCC element's names. */
const MAX_VALUE_BYTES = 12 * 1024;
const LOG_EVERY_MS = 10_000;

export interface ForwardedCertificateOptions {
  header: string;
  trustProxyHops: number;
  /** TLS_CLIENT_CERT_HEADER_FROM: the addresses and CIDR ranges the proxy connects from. */
  from: string[];
  /** TLS_CLIENT_CA_FILE's certificates; none: a forwarded PEM cannot be verified and is refused. */
  cas: X509Certificate[];
  logger: Logger;
  clock?: () => number;
}

/** Splits at each separator outside double quotes (XFCC's elements by `,`, an element's pairs by `;`). */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && quoted) current += ch + (text[++i] ?? '');
    else if (ch === '"') {
      quoted = !quoted;
      current += ch;
    } else if (ch === separator && !quoted) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

const unquote = (value: string): string =>
  value.startsWith('"') && value.endsWith('"') && value.length >= 2
    ? value.slice(1, -1).replace(/\\(.)/g, '$1')
    : value;

/** An XFCC element's pairs; keys lowercased, `URI` and `DNS` may repeat. */
function xfccPairs(element: string): Map<string, string[]> {
  const pairs = new Map<string, string[]>();
  for (const pair of splitOutsideQuotes(element, ';')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const key = pair.slice(0, eq).trim().toLowerCase();
    pairs.set(key, [...(pairs.get(key) ?? []), unquote(pair.slice(eq + 1).trim())]);
  }
  return pairs;
}

/** A forwarded PEM as parsed and checked against the CAs: what does not change from one request to the next. */
interface ParsedPem {
  certificate: PeerCertificate;
  /** Issued by one of the CAs, its signature verified. */
  issued: boolean;
  validFrom: number;
  validTo: number;
}

/** A PEM (URL-encoded, with or without its armour) parsed and its issuer's signature checked against `cas`. */
function parsePem(encoded: string, cas: X509Certificate[]): ParsedPem | 'malformed' {
  let pem: string;
  try {
    pem = decodeURIComponent(encoded.replaceAll('+', '%2B'));
  } catch {
    return 'malformed';
  }
  if (!pem.includes('-----BEGIN'))
    pem = `-----BEGIN CERTIFICATE-----\n${pem.replace(/\s+/g, '\n')}\n-----END CERTIFICATE-----`;
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pem);
  } catch {
    return 'malformed';
  }
  return {
    certificate: certificateOf(x509, undefined),
    issued: cas.some((ca) => x509.checkIssued(ca) && x509.verify(ca.publicKey)),
    validFrom: Date.parse(x509.validFrom),
    validTo: Date.parse(x509.validTo),
  };
}

/** The forwarded PEMs parsed lately, by the header's text: a client's next request costs a map lookup, not a parse and a signature check. */
const PARSED_PEMS_MAX_CHARS = 4 * 1024 * 1024;

/** A certificate from a forwarded PEM, verified against `cas` (parsed once per PEM text) and dated at `now`. */
function verifiedPemOf(cas: X509Certificate[]) {
  const parsed = new LRUCache<string, ParsedPem | 'malformed'>({
    maxSize: PARSED_PEMS_MAX_CHARS,
    sizeCalculation: (_, encoded) => encoded.length + 1,
  });
  return (encoded: string, now: number): PeerCertificate | 'malformed' => {
    let pem = parsed.get(encoded);
    if (pem === undefined) parsed.set(encoded, (pem = parsePem(encoded, cas)));
    if (pem === 'malformed') return pem;
    const inDate = pem.validFrom <= now && now < pem.validTo;
    const problem = !pem.issued ? 'unknown_ca' : inDate ? undefined : 'expired';
    return problem === undefined ? pem.certificate : { ...pem.certificate, problem };
  };
}

/** The certificate an XFCC element names, or why it names none. */
function xfccCertificate(
  element: string,
  verifiedPem: ReturnType<typeof verifiedPemOf>,
  now: number,
): PeerCertificate | 'malformed' {
  const pairs = xfccPairs(element);
  const cert = pairs.get('cert')?.[0];
  if (cert !== undefined) return verifiedPem(cert, now);
  const hash = pairs.get('hash')?.[0];
  if (hash === undefined || !/^[0-9A-Fa-f]{64}$/.test(hash)) return 'malformed';
  return {
    sha256: fingerprintOf(hash),
    subject: pairs.get('subject')?.[0],
    sanUris: pairs.get('uri') ?? [],
    sanDns: pairs.get('dns') ?? [],
    problem: undefined,
  };
}

/** The peers of `entries` (addresses and CIDR ranges, as TLS_CLIENT_CERT_HEADER_FROM checked them). */
function peersOf(entries: string[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const type = isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return (address) => {
    if (address === undefined) return false;
    // An IPv4 peer on a dual-stack listener shows as ::ffff:a.b.c.d.
    const v4 = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : undefined;
    return v4 === undefined ? list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6') : list.check(v4, 'ipv4');
  };
}

/** The reader of the header: the certificate it forwards from the trusted hop, else undefined (with a log line). */
export function forwardedCertificateReader(options: ForwardedCertificateOptions) {
  const { header, trustProxyHops, cas, logger } = options;
  const fromProxy = peersOf(options.from);
  const verifiedPem = verifiedPemOf(cas);
  const clock = options.clock ?? Date.now;
  const xfcc = header === 'x-forwarded-client-cert';
  let lastLogged = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  /** One line per reason at most every 10 s, with the count of those not written: a flood writes no flood. */
  const ignored = (reason: string): undefined => {
    const now = clock();
    if (now - lastLogged < LOG_EVERY_MS) suppressed++;
    else {
      logger.warn(
        { event: 'client_cert_header_ignored', header, reason, suppressed },
        'client certificate header ignored',
      );
      lastLogged = now;
      suppressed = 0;
    }
    return undefined;
  };
  return function forwardedCertificate(req: IncomingMessage): PeerCertificate | undefined {
    const raw = req.headers[header];
    if (raw === undefined) return undefined;
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    // A client that reaches the gateway itself may send any header, X-Forwarded-For included: only the proxy's own
    // connections are believed.
    if (!fromProxy(req.socket.remoteAddress)) return ignored('untrusted_peer');
    // Only a request that came through every trusted proxy: each appended the address it saw.
    const forwardedFor = req.headers['x-forwarded-for'];
    const hops = typeof forwardedFor === 'string' ? forwardedFor.split(',').length : 0;
    if (hops < trustProxyHops) return ignored('untrusted_hop');
    if (value.length > MAX_VALUE_BYTES) return ignored('too_large');
    const entry = xfcc ? trustedForwardedEntryOfXfcc(value, trustProxyHops) : value.trim();
    if (!entry) return ignored('malformed');
    const cert = xfcc ? xfccCertificate(entry, verifiedPem, clock()) : verifiedPem(entry, clock());
    return cert === 'malformed' ? ignored('malformed') : cert;
  };
}

/** The XFCC element the outermost trusted hop wrote: each hop appends one, so the Nth from the right. */
function trustedForwardedEntryOfXfcc(value: string, trustProxyHops: number): string | undefined {
  const elements = splitOutsideQuotes(value, ',')
    .map((e) => e.trim())
    .filter(Boolean);
  return elements[Math.max(0, elements.length - trustProxyHops)];
}
