// The client-credentials grant behind both token endpoints (POST /token/login in the upstream's dialect, POST
// /oauth2/token in RFC 6749's): one reading of the form and the client's credentials, one failed-login throttle,
// one log line per failure. Each endpoint only words the answer and the refusals.
import type { LoginThrottle } from '../limits/login-throttle.js';
import type { Logger } from '../observability/logger.js';
import { BASIC, decodeBasic } from './basic-credentials.js';
import type { ClientRegistry } from './client-registry.js';
import { GATEWAY_SCOPE, type GatewayTokens } from './gateway-tokens.js';
import { logLoginFailed } from './login-failure.js';

/** The RFC 6749 token endpoint (src/routes/oauth-server.ts) and its RFC 8414 metadata. */
export const OAUTH_TOKEN_PATH = '/oauth2/token';
export const OAUTH_METADATA_PATH = '/.well-known/oauth-authorization-server';

/** RFC 6749 section 5.2 with RFC 9110's challenge on a 401: the token endpoints take client_secret_basic. */
export const TOKEN_ENDPOINT_CHALLENGE = 'Basic realm="callerid-gateway", charset="UTF-8"';

/**
 * The RFC 6749 section 5.2 codes a refusal carries; `temporarily_unavailable` (section 4.1.2.1's, registered for
 * the authorization endpoint) stands for the failed-login throttle, which section 5.2 has no code for.
 */
export type GrantErrorCode =
  'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope' | 'temporarily_unavailable';

/** Why a grant was refused; the endpoint chooses the status and body it answers with. */
export class GrantRefusal extends Error {
  readonly error: GrantErrorCode;
  /** The client sent (or tried to send) its credentials as HTTP Basic: RFC 6749 then wants 401 and a challenge. */
  readonly viaBasic: boolean;
  /** With `temporarily_unavailable`: `Retry-After` and the RateLimit fields of the policy that refused. */
  readonly headers: Record<string, string>;

  constructor(error: GrantErrorCode, description: string, viaBasic: boolean, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'GrantRefusal';
    this.error = error;
    this.viaBasic = viaBasic;
    this.headers = headers;
  }
}

export interface Granted {
  clientId: string;
  accessToken: string;
  expiresInSeconds: number;
  /** The one scope a gateway token carries. */
  scope: typeof GATEWAY_SCOPE;
}

export interface GrantServices {
  clients: ClientRegistry;
  gatewayTokens: GatewayTokens;
  /** The failed-login throttle the HTTP Basic routes count against too. */
  loginThrottle: LoginThrottle;
  logger: Logger;
}

/** What the grant reads of a token request, whichever route it came to. */
export interface GrantRequest {
  contentType: string | undefined;
  authorization: string | undefined;
  body(): Promise<ArrayBuffer>;
  /** The caller's address as the failed-login throttle counts it (trusted-proxy aware). */
  address(): string | undefined;
}

export interface GrantOptions {
  /**
   * Read the form's `scope` (RFC 6749 section 3.3): absent, empty or only the gateway's scope is granted, anything
   * else refused with `invalid_scope`. Off for the upstream's dialect, which never had the field and ignores it.
   */
  checkScope: boolean;
}

/**
 * Client credentials from `Authorization: Basic` (RFC 6749 section 2.3.1: id and secret each form-urlencoded, then
 * joined by a colon), or undefined when the header is absent. A header that is not readable Basic is refused.
 */
function basicClient(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (header === undefined) return undefined;
  const encoded = BASIC.exec(header);
  const pair = encoded ? decodeBasic(encoded[1]!) : undefined;
  if (pair === undefined)
    throw new GrantRefusal(
      'invalid_client',
      'Use Authorization: Basic <base64 of client-id:secret>, or the form fields.',
      true,
    );
  return { clientId: formDecoded(pair.id), clientSecret: formDecoded(pair.secret) };
}

function formDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}

/** Runs the grant for a token request: the token issued, or a {@link GrantRefusal}. */
export async function grantClientCredentials(
  services: GrantServices,
  request: GrantRequest,
  options: GrantOptions,
): Promise<Granted> {
  const type = request.contentType ?? '';
  const { authorization } = request;
  const refuse = (error: GrantErrorCode, description: string) =>
    new GrantRefusal(error, description, authorization !== undefined);
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw refuse('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  // Read as bytes: the form is not text to workerd, which warns on .text() of a form body.
  const form = new URLSearchParams(new TextDecoder().decode(await request.body()));
  const field = (name: string) => {
    const values = form.getAll(name);
    if (values.length > 1) throw refuse('invalid_request', `The field "${name}" is given more than once.`);
    return values[0] ?? '';
  };
  const grantType = field('grant_type');
  const basic = basicClient(authorization);
  if (basic !== undefined && (form.has('client_id') || form.has('client_secret'))) {
    // RFC 6749 section 2.3: a client uses one authentication method per request.
    throw refuse(
      'invalid_request',
      'Send the client credentials either as HTTP Basic or as the form fields "client_id" and "client_secret", not both.',
    );
  }
  const clientId = basic?.clientId ?? field('client_id');
  const clientSecret = basic?.clientSecret ?? field('client_secret');
  if (!grantType) throw refuse('invalid_request', 'The field "grant_type" is required.');
  if (grantType !== 'client_credentials') {
    throw refuse('unsupported_grant_type', 'Only grant_type=client_credentials is supported.');
  }
  if (!clientId || !clientSecret) {
    throw refuse('invalid_request', 'The fields "client_id" and "client_secret" are required.');
  }
  // RFC 6749 section 3.3: space-delimited; the value is not echoed (it could be anything the caller typed).
  if (
    options.checkScope &&
    field('scope')
      .split(' ')
      .some((scope) => scope !== '' && scope !== GATEWAY_SCOPE)
  ) {
    throw refuse('invalid_scope', `The only scope this gateway grants is ${GATEWAY_SCOPE}.`);
  }
  const attempt = await services.loginThrottle.begin(clientId, request.address());
  if (!attempt.allowed) {
    const seconds = String(attempt.retryAfterSeconds);
    throw new GrantRefusal(
      'temporarily_unavailable',
      `Too many failed logins; try again in ${seconds} s.`,
      authorization !== undefined,
      attempt.headers,
    );
  }
  if (!(await services.clients.authenticate(clientId, clientSecret))) {
    logLoginFailed(services.logger, services.clients.has, clientId, basic === undefined ? 'form' : 'basic');
    throw refuse('invalid_client', 'Unknown client or wrong secret.');
  }
  await attempt.succeeded();
  const issued = await services.gatewayTokens.issue(clientId);
  return { clientId, accessToken: issued.accessToken, expiresInSeconds: issued.expiresInSeconds, scope: GATEWAY_SCOPE };
}
