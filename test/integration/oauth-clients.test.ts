// Standard OAuth 2.0 clients over a real socket: oauth4webapi and openid-client discover the gateway from its base
// URL (RFC 8414), obtain a token with client_secret_basic and client_secret_post at POST /oauth2/token and search
// with it; refusals reach them as their own OAuth errors. The gateway listens on plain http on loopback, so the
// libraries are told to allow it (oauth.allowInsecureRequests, openid-client's allowInsecureRequests).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as clients from '../helpers/oauth-clients.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

describe('standard OAuth 2.0 clients against the gateway', () => {
  let stack: Stack;
  let target: clients.OAuthTarget;
  beforeAll(async () => {
    stack = await startStack();
    target = { base: stack.gateway.url };
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('find the token endpoint from the base URL (RFC 8414), the issuer being the origin asked', async () => {
    const as = await clients.oauth4webapiDiscover(target);
    expect(as).toEqual({
      issuer: stack.gateway.url,
      token_endpoint: `${stack.gateway.url}/oauth2/token`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint: `${stack.gateway.url}/oauth2/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      introspection_endpoint: `${stack.gateway.url}/oauth2/introspect`,
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['SEARCH_contacts_watch'],
      response_types_supported: [],
      service_documentation: `${stack.gateway.url}/docs`,
    });
  });

  for (const [library, login] of Object.entries(clients.LOGINS)) {
    for (const method of clients.CLIENT_AUTH_METHODS) {
      it(`${library} logs in with ${method} and searches with the token`, async () => {
        const { token, search } = await login(target, 'crm', CLIENTS.crm, method);
        expect(token).toMatchObject({
          access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
          token_type: 'bearer', // lower-cased by the libraries
          expires_in: 90000,
          scope: 'SEARCH_contacts_watch',
        });
        expect(search.status).toBe(200);
        expect(await search.json()).toMatchObject({ total: 2 });
      });
    }

    it(`${library}: a wrong secret is its OAuth error, invalid_client in the body for the form, the Basic challenge for HTTP Basic`, async () => {
      const { post, basic } = await clients.wrongSecretErrors(login, target, 'pbx');
      expect(post).toBeInstanceOf(clients.oauth.ResponseBodyError);
      expect(post).toMatchObject({ status: 400, error: 'invalid_client', cause: { error: 'invalid_client' } });
      expect(basic).toBeInstanceOf(clients.oauth.WWWAuthenticateChallengeError);
      expect(basic).toMatchObject({
        status: 401,
        cause: [{ scheme: 'basic', parameters: { realm: 'callerid-gateway' } }],
      });
      // Both logged as failed logins, with the (registered) client id and how its credentials came.
      const failed = stack.logs.filter((l) => l.fields.event === 'login_failed' && l.fields.clientId === 'pbx');
      expect(failed.map((l) => l.fields.scheme).slice(-2)).toEqual(['form', 'basic']);
      expect(JSON.stringify(stack.logs)).not.toContain('wrong-secret');
    });
  }
});

describe('POST /oauth2/token as RFC 6749 has it', () => {
  let stack: Stack;
  let url: string;
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields),
    });
  const basic = (id: string, secret: string) => ({
    authorization: `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`,
  });
  const GRANT = { grant_type: 'client_credentials' };

  beforeAll(async () => {
    stack = await startStack({
      env: { PUBLIC_BASE_URL: 'https://callerid.example.com/', LOGIN_FAILURES_PER_CLIENT: '3' },
    });
    url = `${stack.gateway.url}/oauth2/token`;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('publishes PUBLIC_BASE_URL as the issuer, whatever host the request named', async () => {
    const res = await fetch(`${stack.gateway.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({
      issuer: 'https://callerid.example.com',
      token_endpoint: 'https://callerid.example.com/oauth2/token',
    });
  });

  it('answers §5.1 with no-store: expires_in a number, scope a space-delimited string, nothing of the upstream dialect', async () => {
    for (const res of [
      await form({ ...GRANT, client_id: 'crm', client_secret: CLIENTS.crm }),
      await form({ ...GRANT, scope: 'SEARCH_contacts_watch' }, basic('crm', CLIENTS.crm)),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('pragma')).toBe('no-cache');
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['access_token', 'token_type', 'expires_in', 'scope']);
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 90000, scope: 'SEARCH_contacts_watch' });
      expect((await stack.search('020 7946 0001', body.access_token as string)).status).toBe(200);
    }
  });

  it('answers §5.2 as application/json with error and error_description, and no-store', async () => {
    const cases: [Response, number, string][] = [
      [await form({ ...GRANT, client_id: 'ops', client_secret: 'wrong' }), 400, 'invalid_client'],
      [await form(GRANT, basic('ops', 'wrong')), 401, 'invalid_client'],
      [await form(GRANT, { authorization: 'Basic !!!' }), 401, 'invalid_client'],
      [await form({ grant_type: 'password', client_id: 'ops', client_secret: 'x' }), 400, 'unsupported_grant_type'],
      [await form({ client_id: 'ops', client_secret: 'x' }), 400, 'invalid_request'],
      [await form({ ...GRANT, client_id: 'ops' }), 400, 'invalid_request'],
      [
        await form({ ...GRANT, client_id: 'ops', client_secret: CLIENTS.ops }, basic('ops', CLIENTS.ops)),
        400,
        'invalid_request',
      ],
      [await form({ ...GRANT, client_id: 'ops', client_secret: CLIENTS.ops, scope: 'admin' }), 400, 'invalid_scope'],
      [
        await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
        400,
        'invalid_request',
      ],
    ];
    for (const [res, status, error] of cases) {
      expect(res.status, error).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('pragma')).toBe('no-cache');
      // RFC 6749 section 5.2: the challenge exactly where the client used HTTP Basic (RFC 9110: every 401 has one).
      expect(res.headers.get('www-authenticate')).toBe(
        status === 401 ? 'Basic realm="callerid-gateway", charset="UTF-8"' : null,
      );
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['error', 'error_description']);
      expect(body.error).toBe(error);
      expect(body.error_description).toEqual(expect.any(String));
    }
  });

  it('counts failures in one throttle with POST /token/login: the attempt past the limit is 429 temporarily_unavailable', async () => {
    const login = await fetch(`${stack.gateway.url}/token/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...GRANT, client_id: 'pbx', client_secret: 'wrong' }),
    });
    expect(login.status).toBe(401);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await form({ ...GRANT, client_id: 'pbx', client_secret: 'wrong' })).status);
    expect(statuses).toEqual([400, 400, 429]);
    const right = await form(GRANT, basic('pbx', CLIENTS.pbx));
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(right.headers.get('ratelimit')).toMatch(/^"login-client";r=0;t=\d+$/);
    expect(right.headers.get('www-authenticate')).toBeNull();
    expect(await right.json()).toMatchObject({ error: 'temporarily_unavailable' });
  });

  it('bounds the body as the login form is (REQUEST_MAX_BODY_BYTES): 413 before reading it', async () => {
    const res = await form({ ...GRANT, client_id: 'crm', client_secret: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });
});
