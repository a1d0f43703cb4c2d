// Where Node finds a request's client certificate: on its TLS connection (TLS_CLIENT_CA_FILE). None is looked for
// when client certificates are off, so a plain-HTTP gateway does no work for them.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { PeerCertificate } from '../../auth/certificates/peer-certificate.js';
import type { Config } from '../../config/config.js';
import { socketCertificate } from './tls-peer-certificate.js';

export type CertificateReader = (req: IncomingMessage) => PeerCertificate | undefined;

/** The reader of a request's client certificate; undefined when the gateway reads none. */
export function nodeCertificateReader(config: Pick<Config, 'tls'>): CertificateReader | undefined {
  if (config.tls.clientCaFile === undefined || config.tls.certFile === undefined) return undefined;
  return (req) => socketCertificate(req.socket as TLSSocket);
}
