// Who a request is for, from its Authorization field: a registered client's gateway token (Bearer), or its id and
// secret as HTTP Basic credentials (a dialplan cannot log in first). A refusal is a GatewayError to answer with.
import { GatewayError } from '../base/errors.js';
import { isBasicScheme, type BasicCredentials } from './basic-credentials.js';
import { bearerToken, isBearerScheme, type GatewayTokens } from './gateway-tokens.js';
import type { CertificateAuth } from './certificates/certificate-auth.js';
import type { PeerCertificate } from './certificates/peer-certificate.js';
import { presentsBinding, type CertificateSource } from './certificates/token-binding.js';

export type ClientAuthResult = { clientId: string } | { refused: GatewayError };

/**
 * Decides who a request is for; never throws. `authorization` is the whole field as the Fetch API reads it (repeated
 * fields joined with ", "); `addressOf` gives the caller's address the failed-login throttle counts, when asked;
 * `certificate` the client certificate, read only for a request without an Authorization field.
 */
export type ClientAuthenticator = (
  authorization: string | undefined,
  addressOf: () => string | undefined,
  certificate?: CertificateSource,
) => Promise<ClientAuthResult>;

export interface ClientAuthOptions {
  gatewayTokens: GatewayTokens;
  /** Checks, counts and logs Basic credentials as the token endpoints do. */
  basic: BasicCredentials;
  /** A client by its certificate (the clients' `certificates`). */
  certificates: CertificateAuth;
}

/** Both schemes are offered: a client without credentials learns it may use either. */
export const CLIENT_CHALLENGE = 'Bearer realm="callerid-gateway", Basic realm="callerid-gateway", charset="UTF-8"';

export const BEARER_REALM = 'Bearer realm="callerid-gateway"';

export const unauthorized = (detail: string, challenge = CLIENT_CHALLENGE): ClientAuthResult => ({
  refused: new GatewayError('unauthorized', detail, { headers: { 'www-authenticate': challenge } }),
});

/** The client of a Bearer header; the verification itself is cached by `tokens`. */
export async function verifyBearer(
  gatewayTokens: GatewayTokens,
  header: string,
  certificate?: CertificateSource,
): Promise<ClientAuthResult> {
  // Held back, not refused: the token may be good, and the client is to retry rather than log in again.
  if (!gatewayTokens.canCheck()) {
    const detail = 'Tokens cannot be checked against the revocations yet: the shared store has not answered. Retry.';
    return { refused: new GatewayError('unavailable', detail, { headers: { 'retry-after': '1' } }) };
  }
  const token = bearerToken(header);
  const verified = token === undefined ? null : await gatewayTokens.verify(token);
  if (verified && !presentsBinding(verified.x5tS256, certificate))
    return unauthorized(
      'The access token is bound to a client certificate (RFC 8705) this request does not present.',
      `${BEARER_REALM}, error="invalid_token"`,
    );
  if (verified) return { clientId: verified.clientId };
  return unauthorized('The access token is missing, invalid or expired.', `${BEARER_REALM}, error="invalid_token"`);
}

/** The client of a verified certificate one client lists, or the refusal naming none. */
export function byCertificate(certificates: CertificateAuth, cert: PeerCertificate): ClientAuthResult {
  const verdict = certificates(cert);
  return 'clientId' in verdict ? verdict : unauthorized(verdict.refused);
}

export function createClientAuthenticator(options: ClientAuthOptions): ClientAuthenticator {
  const { gatewayTokens, basic, certificates } = options;
  return async function authenticate(header, addressOf, certificate) {
    const cert = header ? undefined : certificate?.peerCertificate?.();
    if (cert !== undefined) return byCertificate(certificates, cert);
    if (!header)
      return unauthorized(
        'Credentials are required: Authorization: Bearer <token> (POST /token/login), or Basic with the client id and secret.',
      );
    if (isBearerScheme(header)) return verifyBearer(gatewayTokens, header, certificate);
    if (!isBasicScheme(header))
      return unauthorized('Use Authorization: Bearer <token> or Basic <base64 of client-id:secret>.');
    const verdict = await basic.verify(header, addressOf());
    if ('clientId' in verdict) return verdict;
    if (verdict.refused === 'throttled') {
      const seconds = String(verdict.retryAfterSeconds);
      return {
        refused: new GatewayError('too_many_requests', `Too many failed logins; try again in ${seconds} s.`, {
          headers: verdict.headers,
        }),
      };
    }
    return unauthorized('Unknown client or wrong secret.');
  };
}
