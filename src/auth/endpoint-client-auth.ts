// The request side of the gateway's OAuth endpoints (token, revocation, introspection): the form body (RFC 6749
// appendix B) and the client's authentication by HTTP Basic or the form's client_id and client_secret (section
// 2.3.1), checked as every route checks credentials. A refusal is an OAuthRefusal the endpoint words.
import type { LoginThrottle } from '../limits/login-throttle.js';
import { checkCredentials, isBasicScheme, readBasic, type CredentialServices } from './basic-credentials.js';
import { contentTypeIs, FORM_URLENCODED } from './media-type.js';
import type { CertificateAuth } from './certificates/certificate-auth.js';
import type { PeerCertificate } from './certificates/peer-certificate.js';

/** RFC 6749 section 2.3.1's two ways, and RFC 8705's certificate where the gateway reads client certificates. */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'tls_client_auth'] as const;

/** RFC 6749 section 5.2 with RFC 9110's challenge on a 401: the endpoints take client_secret_basic. */
export const TOKEN_ENDPOINT_CHALLENGE = 'Basic realm="callerid-gateway", charset="UTF-8"';

/**
 * The RFC 6749 section 5.2 codes a refusal carries (RFC 7009 section 2.2.1 adds `unsupported_token_type`);
 * `temporarily_unavailable` (section 4.1.2.1's, registered for the authorization endpoint) stands for the
 * failed-login throttle, which section 5.2 has no code for.
 */
type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'temporarily_unavailable';

/** Why an OAuth endpoint refused a request; the endpoint chooses the status and body it answers with. */
export class OAuthRefusal extends Error {
  readonly error: OAuthErrorCode;
  /** The client sent (or tried to send) its credentials as HTTP Basic: RFC 6749 then wants 401 and a challenge. */
  readonly viaBasic: boolean;
  /** With `temporarily_unavailable`: `Retry-After` and the RateLimit fields of the policy that refused. */
  readonly headers: Record<string, string>;

  constructor(error: OAuthErrorCode, description: string, viaBasic: boolean, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'OAuthRefusal';
    this.error = error;
    this.viaBasic = viaBasic;
    this.headers = headers;
  }
}

/** What an OAuth endpoint reads of a request, whichever route it came to. */
export interface OAuthRequest {
  contentType: string | undefined;
  authorization: string | undefined;
  body(): Promise<ArrayBuffer>;
  /** The caller's address as the failed-login throttle counts it (trusted-proxy aware). */
  address(): string | undefined;
  /** The client certificate of the request, where the runtime reads one (RFC 8705's `tls_client_auth`). */
  peerCertificate?(): PeerCertificate | undefined;
}

export type EndpointClientServices = CredentialServices & {
  loginThrottle: LoginThrottle;
  clientCertificates: { auth: CertificateAuth };
};

/** A request's form, each field at most once. */
interface OAuthForm {
  has(name: string): boolean;
  /** The field's value, '' when absent; a field given twice is refused (RFC 6749 section 3.2). */
  field(name: string): string;
  /** Refuses with RFC 6749's code; 401 where the client used Basic. */
  refuse(error: OAuthErrorCode, description: string): OAuthRefusal;
}

/** Reads the body of an OAuth endpoint's request: `application/x-www-form-urlencoded` or refused. */
export async function readOAuthForm(request: OAuthRequest): Promise<OAuthForm> {
  const refuse = (error: OAuthErrorCode, description: string) =>
    new OAuthRefusal(error, description, request.authorization !== undefined);
  if (!contentTypeIs(request.contentType, FORM_URLENCODED)) {
    throw refuse('invalid_request', `The body must be ${FORM_URLENCODED} (UTF-8).`);
  }
  // Read as bytes: the form is not text to workerd, which warns on .text() of a form body.
  const form = new URLSearchParams(new TextDecoder().decode(await request.body()));
  return {
    has: (name) => form.has(name),
    field(name) {
      const values = form.getAll(name);
      if (values.length > 1) throw refuse('invalid_request', `The field "${name}" is given more than once.`);
      return values[0] ?? '';
    },
    refuse,
  };
}

/** The client's id and secret from `Authorization: Basic`, or from the form; a malformed header is a failed login. */
function credentialsOf(request: OAuthRequest, form: OAuthForm) {
  const header = request.authorization;
  if (header === undefined) {
    const id = form.field('client_id');
    const secret = form.field('client_secret');
    // RFC 8705 section 2.1: the client id in the form, the certificate instead of a secret.
    const certificate = id && !form.has('client_secret') ? request.peerCertificate?.() : undefined;
    if (certificate !== undefined) return { id, certificate, scheme: 'tls' } as const;
    if (!id || !secret)
      throw form.refuse('invalid_request', 'The fields "client_id" and "client_secret" are required.');
    return { pair: { id, secret }, scheme: 'form' } as const;
  }
  if (!isBasicScheme(header)) {
    throw form.refuse('invalid_client', 'Use Authorization: Basic <base64 of client-id:secret>, or the form fields.');
  }
  if (form.has('client_id') || form.has('client_secret')) {
    // RFC 6749 section 2.3: a client uses one authentication method per request.
    throw form.refuse(
      'invalid_request',
      'Send the client credentials either as HTTP Basic or as the form fields "client_id" and "client_secret", not both.',
    );
  }
  return { pair: readBasic(header), scheme: 'basic' } as const;
}

/**
 * The registered client an OAuth endpoint's request authenticates as (RFC 6749 section 2.3.1), counted against the
 * failed-login throttle as every route's credentials are; otherwise an {@link OAuthRefusal}.
 */
export async function authenticateEndpointClient(
  services: EndpointClientServices,
  request: OAuthRequest,
  form: OAuthForm,
): Promise<string> {
  return (await endpointClient(services, request, form)).clientId;
}

/** As {@link authenticateEndpointClient}, with the certificate the client authenticated by (`tls_client_auth`). */
export async function endpointClient(
  services: EndpointClientServices,
  request: OAuthRequest,
  form: OAuthForm,
): Promise<{ clientId: string; certificate?: PeerCertificate }> {
  const credentials = credentialsOf(request, form);
  if (credentials.scheme === 'tls') return byCertificate(services, credentials, form);
  const { pair, scheme } = credentials;
  const verdict = await checkCredentials(services, pair, request.address(), scheme);
  if ('clientId' in verdict) return { clientId: verdict.clientId };
  if (verdict.refused === 'throttled') {
    const seconds = String(verdict.retryAfterSeconds);
    throw new OAuthRefusal(
      'temporarily_unavailable',
      `Too many failed logins; try again in ${seconds} s.`,
      scheme === 'basic',
      verdict.headers,
    );
  }
  throw form.refuse(
    'invalid_client',
    pair === 'malformed' ? 'Use Authorization: Basic <base64 of client-id:secret>.' : 'Unknown client or wrong secret.',
  );
}

/** `tls_client_auth` (RFC 8705 section 2.1.2): the verified certificate must be one the named client lists. */
function byCertificate(
  services: EndpointClientServices,
  credentials: { id: string; certificate: PeerCertificate },
  form: OAuthForm,
): { clientId: string; certificate: PeerCertificate } {
  const verdict = services.clientCertificates.auth(credentials.certificate);
  if ('clientId' in verdict && verdict.clientId === credentials.id)
    return { clientId: verdict.clientId, certificate: credentials.certificate };
  throw form.refuse(
    'invalid_client',
    'refused' in verdict ? verdict.refused : 'The client certificate is not registered for this client.',
  );
}
