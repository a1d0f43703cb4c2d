// A new app's login as the two standard OAuth 2.0 libraries do it, against a gateway's base URL: discovery (RFC
// 8414), the client-credentials grant, a search with the token. Shared by the Node test (a real socket, plain
// http on loopback: the libraries' documented opt-in to insecure requests) and the workerd test (https through
// the Worker's own fetch handler, with the libraries' customFetch).
import * as oauth from 'oauth4webapi';
import * as openid from 'openid-client';

export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post';

/** What the libraries' `customFetch` is handed: a subset of RequestInit (the body a string, bytes or a form). */
type TargetFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal | null },
) => Promise<Response>;

export interface OAuthTarget {
  /** The gateway's base URL, the issuer identifier the app was told. */
  base: string;
  /** Where the requests go instead of the global fetch (workerd: the Worker's fetch handler). */
  fetch?: TargetFetch;
}

/** The number every search here asks for: listed in the simulator's directory. */
const SEARCH_NUMBER = '+44 20 7946 0001';

const searchUrl = (target: OAuthTarget) =>
  new URL(`/v2/contacts/search?what=${encodeURIComponent(SEARCH_NUMBER)}`, target.base);

/** Plain http is refused by both libraries unless allowed; the Node test's gateway listens on http://127.0.0.1. */
const insecure = (target: OAuthTarget) => new URL(target.base).protocol === 'http:';

function oauthOptions(target: OAuthTarget) {
  return {
    ...(insecure(target) ? { [oauth.allowInsecureRequests]: true } : {}),
    ...(target.fetch ? { [oauth.customFetch]: target.fetch } : {}),
  };
}

/** oauth4webapi's discovery from the base URL alone. */
export async function oauth4webapiDiscover(target: OAuthTarget): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(target.base);
  const res = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...oauthOptions(target) });
  return oauth.processDiscoveryResponse(issuer, res);
}

interface LoggedIn {
  token: oauth.TokenEndpointResponse;
  /** The search's answer to a request carrying the token, sent by the same library. */
  search: Response;
}

/** Discovery, the grant with `method`, then a search with the token, all through oauth4webapi. */
async function oauth4webapiLogin(
  target: OAuthTarget,
  clientId: string,
  secret: string,
  method: ClientAuthMethod,
): Promise<LoggedIn> {
  const as = await oauth4webapiDiscover(target);
  const client: oauth.Client = { client_id: clientId };
  const auth = method === 'client_secret_basic' ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);
  const res = await oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams(), oauthOptions(target));
  const token = await oauth.processClientCredentialsResponse(as, client, res);
  const search = await oauth.protectedResourceRequest(
    token.access_token,
    'GET',
    searchUrl(target),
    undefined,
    undefined,
    oauthOptions(target),
  );
  return { token, search };
}

/** Discovery, the grant with `method`, then a search with the token, all through openid-client. */
async function openidClientLogin(
  target: OAuthTarget,
  clientId: string,
  secret: string,
  method: ClientAuthMethod,
): Promise<LoggedIn> {
  const config = await openid.discovery(
    new URL(target.base),
    clientId,
    undefined,
    method === 'client_secret_basic' ? openid.ClientSecretBasic(secret) : openid.ClientSecretPost(secret),
    {
      algorithm: 'oauth2',
      ...(insecure(target) ? { execute: [openid.allowInsecureRequests] } : {}),
      ...(target.fetch ? { [openid.customFetch]: target.fetch } : {}),
    },
  );
  const token = await openid.clientCredentialsGrant(config);
  const search = await openid.fetchProtectedResource(config, token.access_token, searchUrl(target), 'GET');
  return { token, search };
}

/** Each library's whole login, by its name. */
export const LOGINS = { oauth4webapi: oauth4webapiLogin, 'openid-client': openidClientLogin } as const;
export const CLIENT_AUTH_METHODS: readonly ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** What a library throws for a wrong secret sent each way (the error itself, not a rejection). */
export async function wrongSecretErrors(
  login: (typeof LOGINS)[keyof typeof LOGINS],
  target: OAuthTarget,
  clientId: string,
): Promise<{ post: unknown; basic: unknown }> {
  const post = await login(target, clientId, 'wrong-secret', 'client_secret_post').catch((e: unknown) => e);
  const basic = await login(target, clientId, 'wrong-secret', 'client_secret_basic').catch((e: unknown) => e);
  return { post, basic };
}

/** oauth4webapi's RFC 7009 revocation of `token`, discovered from the base URL, as `clientId` (HTTP Basic). */
export async function oauth4webapiRevoke(
  target: OAuthTarget,
  clientId: string,
  secret: string,
  token: string,
): Promise<void> {
  const as = await oauth4webapiDiscover(target);
  const res = await oauth.revocationRequest(
    as,
    { client_id: clientId },
    oauth.ClientSecretBasic(secret),
    token,
    oauthOptions(target),
  );
  await oauth.processRevocationResponse(res);
}

/** oauth4webapi's RFC 7662 introspection of `token`, discovered from the base URL, as `clientId` (HTTP Basic). */
export async function oauth4webapiIntrospect(
  target: OAuthTarget,
  clientId: string,
  secret: string,
  token: string,
): Promise<oauth.IntrospectionResponse> {
  const as = await oauth4webapiDiscover(target);
  const client: oauth.Client = { client_id: clientId };
  const auth = oauth.ClientSecretBasic(secret);
  const res = await oauth.introspectionRequest(as, client, auth, token, oauthOptions(target));
  return oauth.processIntrospectionResponse(as, client, res);
}

export { oauth };
