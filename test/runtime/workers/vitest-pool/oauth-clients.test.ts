// Standard OAuth 2.0 clients against the Worker in workerd: oauth4webapi and openid-client discover it from its
// https base URL (RFC 8414), obtain a token with client_secret_basic and client_secret_post at POST /oauth2/token
// and search with it, their requests handed to the Worker's fetch handler by their own customFetch option (https:
// no insecure-request opt-in needed); a wrong secret reaches them as their own OAuth error.
import { createExecutionContext, reset, waitOnExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import * as clients from '../../../helpers/oauth-clients.js';
import { isolate, simulator, type Isolate } from './control.js';
import { WORKERD_CLIENT } from './workerd-env.js';

describe('standard OAuth 2.0 clients against the Worker', () => {
  let worker: Isolate;
  let target: clients.OAuthTarget;

  beforeEach(async () => {
    await reset();
    await simulator.reset();
    worker = await isolate();
    target = {
      base: 'https://callerid.test',
      fetch: async (url, init) => {
        const ctx = createExecutionContext();
        const res = await worker.gateway.fetch(new Request(url, init as RequestInit), ctx);
        await waitOnExecutionContext(ctx);
        return res;
      },
    };
  });
  it('find the token and revocation endpoints from the base URL, the issuer being PUBLIC_BASE_URL', async () => {
    expect(await clients.oauth4webapiDiscover(target)).toMatchObject({
      issuer: 'https://callerid.test',
      token_endpoint: 'https://callerid.test/oauth2/token',
      revocation_endpoint: 'https://callerid.test/oauth2/revoke',
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'tls_client_auth'],
      tls_client_certificate_bound_access_tokens: true,
      scopes_supported: ['SEARCH_contacts_watch'],
      response_types_supported: [],
    });
  });

  for (const [library, login] of Object.entries(clients.LOGINS)) {
    for (const method of clients.CLIENT_AUTH_METHODS) {
      it(`${library} logs in with ${method} and searches with the token`, async () => {
        const { token, search } = await login(target, WORKERD_CLIENT.id, WORKERD_CLIENT.secret, method);
        expect(token).toMatchObject({ token_type: 'bearer', expires_in: 90000, scope: 'SEARCH_contacts_watch' });
        expect(search.status).toBe(200);
        expect(await search.json()).toMatchObject({ total: 2 });
      });
    }

    it(`${library}: a wrong secret is its OAuth error (invalid_client for the form, the Basic challenge for HTTP Basic)`, async () => {
      const { post, basic } = await clients.wrongSecretErrors(login, target, WORKERD_CLIENT.id);
      expect(post).toBeInstanceOf(clients.oauth.ResponseBodyError);
      expect(post).toMatchObject({ status: 400, error: 'invalid_client' });
      expect(basic).toBeInstanceOf(clients.oauth.WWWAuthenticateChallengeError);
      expect(basic).toMatchObject({ status: 401, cause: [{ scheme: 'basic' }] });
    });
  }
});
