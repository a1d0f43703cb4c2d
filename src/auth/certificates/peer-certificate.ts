// A client certificate as a runtime hands it to the core, whatever presented it: the TLS connection (Node), a trusted
// proxy's header (Node), Cloudflare's `request.cf.tlsClientAuth` (Workers). The core matches it to a client
// (certificate-index.ts) and binds tokens to it (RFC 8705 section 3.1: `cnf.x5t#S256`).

export interface PeerCertificate {
  /** Lowercase hex SHA-256 of the DER certificate. */
  sha256: string;
  /** The subject as RFC 4514 writes it (`CN=pbx,O=Example`), where the runtime gives it. */
  subject: string | undefined;
  /** subjectAltName URIs (a SPIFFE id) and DNS names, where the runtime gives them. */
  sanUris: readonly string[];
  sanDns: readonly string[];
  /**
   * Undefined when the certificate was verified against the client CA (TLS_CLIENT_CA_FILE, or by the proxy or
   * Cloudflare); else why it was not, in a word or two (`unknown_ca`, `expired`, `revoked`, `chain_too_long`).
   */
  problem: string | undefined;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** RFC 8705 section 3.1's `x5t#S256`: the base64url (unpadded) SHA-256 of the DER certificate, from its hex. */
export function thumbprintOf(sha256Hex: string): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (let i = 0; i < sha256Hex.length; i += 2) {
    value = (value << 8) | Number.parseInt(sha256Hex.slice(i, i + 2), 16);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += BASE64URL[(value >> bits) & 63];
    }
    value &= (1 << bits) - 1;
  }
  return bits > 0 ? out + BASE64URL[(value << (6 - bits)) & 63] : out;
}

/** A fingerprint as people write it (`AB:CD:…`, any case) in the one form the gateway compares: 64 lowercase hex digits. */
export const fingerprintOf = (text: string): string => text.replaceAll(':', '').toLowerCase();
