// Where Node finds a request's client certificate: on its TLS connection (TLS_CLIENT_CA_FILE with TLS_CERT_FILE), else
// in the header the trusted proxy forwards it in (TLS_CLIENT_CERT_HEADER). None is looked for when client
// certificates are off, so a plain-HTTP gateway does no work for them.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { PeerCertificate } from '../../auth/certificates/peer-certificate.js';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../observability/logger.js';
import { forwardedCertificateReader } from './forwarded-certificate.js';
import { socketCertificate } from './tls-peer-certificate.js';

export type CertificateReader = (req: IncomingMessage) => PeerCertificate | undefined;

/** The CA certificates of a PEM bundle. */
const certificatesOf = (path: string): X509Certificate[] =>
  (readFileSync(path, 'latin1').match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? []).map(
    (pem) => new X509Certificate(pem),
  );

/** The reader of a request's client certificate; undefined when the gateway reads none. */
export function nodeCertificateReader(
  config: Pick<Config, 'tls' | 'trustProxyHops'>,
  logger: Logger,
): CertificateReader | undefined {
  const { tls } = config;
  const onSocket = tls.clientCaFile !== undefined && tls.certFile !== undefined;
  const forwarded =
    tls.clientCertHeader === undefined
      ? undefined
      : forwardedCertificateReader({
          header: tls.clientCertHeader,
          trustProxyHops: config.trustProxyHops,
          from: tls.clientCertHeaderFrom,
          cas: tls.clientCaFile === undefined ? [] : certificatesOf(tls.clientCaFile),
          logger,
        });
  if (forwarded === undefined) return onSocket ? (req) => socketCertificate(req.socket as TLSSocket) : undefined;
  if (!onSocket) return forwarded;
  return (req) => socketCertificate(req.socket as TLSSocket) ?? forwarded(req);
}
