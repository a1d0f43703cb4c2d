// TLS on the Node listener and client certificates (docs/configuration.md, "TLS and client certificates"; docs/security.md,
// "Client certificates"): the server's certificate and key, the CA client certificates are verified against and its
// CRL, and the header a trusted proxy forwards a client certificate in; the checks across them.
import * as z from 'zod/mini';
import { commaList, optionalText, setting, text, type ConfigProblem, type SettingValues } from './settings-table.js';

/** An HTTP field name (RFC 9110 section 5.1's token), lowercased as the runtimes read fields. */
const fieldName = z.pipe(
  z.optional(text(z.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'))),
  z.transform((v) => (v ? v.toLowerCase() : undefined)),
);

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** An IPv4 or IPv6 address, or a range of them in CIDR notation (`10.0.0.0/8`, `fd00::/8`). */
function isAddressOrRange(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  if (rest.length > 0) return false;
  const v4 = IPV4.test(address);
  const v6 = !v4 && address.includes(':') && URL.canParse(`http://[${address}]/`);
  if (!v4 && !v6) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (v4 ? 32 : 128));
}

/** Comma-separated addresses and CIDR ranges, at least one. */
const addressList = (fallback: string[]) =>
  z._default(
    z.pipe(
      text(
        z.refine(
          (v) => commaList(v).length > 0 && commaList(v).every(isAddressOrRange),
          'must be IP addresses or CIDR ranges, comma-separated (e.g. 127.0.0.0/8,::1 or 10.0.0.0/8)',
        ),
      ),
      z.transform((v: string) => commaList(v)),
    ),
    fallback,
  );

export const TLS_SETTINGS = {
  tls: {
    /** PEM certificate chain served on PORT (Node); with the key, the listener speaks HTTPS. Re-read when it changes. */
    certFile: setting('TLS_CERT_FILE', optionalText),
    keyFile: setting('TLS_KEY_FILE', optionalText),
    /** PEM CA certificates client certificates are verified against; set: the listener asks for a client certificate. */
    clientCaFile: setting('TLS_CLIENT_CA_FILE', optionalText),
    /** PEM certificate revocation lists of that CA. */
    clientCrlFile: setting('TLS_CLIENT_CRL_FILE', optionalText),
    /** The header the trusted hop (TRUST_PROXY_HOPS) forwards the client certificate in: XFCC or a URL-encoded PEM. */
    clientCertHeader: setting('TLS_CLIENT_CERT_HEADER', fieldName),
    /**
     * The addresses a connection carrying TLS_CLIENT_CERT_HEADER may come from (the proxy's own, as the socket shows
     * it): the header from any other peer is ignored, whatever X-Forwarded-For says. Default: loopback (a sidecar).
     */
    clientCertHeaderFrom: setting('TLS_CLIENT_CERT_HEADER_FROM', addressList(['127.0.0.0/8', '::1'])),
  },
};

type TlsValues = SettingValues<typeof TLS_SETTINGS>['tls'];

/** Settings that only make sense together: a certificate with its key, a CRL with its CA, a header behind a proxy. */
export function tlsConflicts(tls: TlsValues, trustProxyHops: number): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if ((tls.certFile === undefined) !== (tls.keyFile === undefined))
    problems.push({
      variable: tls.certFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE',
      problem: 'is required with TLS_CERT_FILE and TLS_KEY_FILE: set both to serve HTTPS, or neither',
    });
  if (tls.clientCrlFile !== undefined && tls.clientCaFile === undefined)
    problems.push({ variable: 'TLS_CLIENT_CRL_FILE', problem: 'is read only with TLS_CLIENT_CA_FILE: set the CA too' });
  if (tls.clientCaFile !== undefined && tls.certFile === undefined && tls.clientCertHeader === undefined)
    problems.push({
      variable: 'TLS_CLIENT_CA_FILE',
      problem:
        'verifies client certificates of an HTTPS listener (TLS_CERT_FILE) or of TLS_CLIENT_CERT_HEADER: set one',
    });
  if (tls.clientCertHeader !== undefined && trustProxyHops === 0)
    problems.push({
      variable: 'TLS_CLIENT_CERT_HEADER',
      problem: 'is read only from a trusted proxy: set TRUST_PROXY_HOPS to the number of proxies in front',
    });
  return problems;
}
