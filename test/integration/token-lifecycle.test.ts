// Revoking and introspecting gateway tokens in one process (no shared store) over a real socket: RFC 7009 at POST
// /oauth2/revoke through oauth4webapi's own revocation call, advertised in the metadata; a client revokes its own
// tokens, an admin client any; the revoked token is refused at once on every route, the search's remembered tokens
// included; an admin revokes every token issued to a client so far; RFC 7662 at POST /oauth2/introspect through
// oauth4webapi's introspection call, for admin clients only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../helpers/pbx.js';
import * as clients from '../helpers/oauth-clients.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

describe('token revocation and introspection in one process', () => {
  let stack: Stack;
  let target: clients.OAuthTarget;
  const revoke = (token: string, authorization: string) =>
    fetch(`${stack.gateway.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
    });
  const searchStatus = async (token: string) => {
    const res = await stack.search('020 7946 0001', token);
    await res.arrayBuffer();
    return res.status;
  };
  const cnamStatus = async (token: string) => {
    const res = await fetch(`${stack.gateway.url}/v2/contacts/cnam?what=%2B442079460001`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await res.arrayBuffer();
    return res.status;
  };

  beforeAll(async () => {
    stack = await startStack();
    target = { base: stack.gateway.url };
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('advertises the revocation endpoint in the metadata (RFC 8414)', async () => {
    const as = await clients.oauth4webapiDiscover(target);
    expect(as).toMatchObject({
      revocation_endpoint: `${stack.gateway.url}/oauth2/revoke`,
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    });
  });

  it("revokes with oauth4webapi's revocation call: the token is refused at once, a remembered one too", async () => {
    const token = await stack.login('crm');
    // Searched first, so the search knows the token without checking it again (the hit path's memo).
    expect(await searchStatus(token)).toBe(200);
    expect(await searchStatus(token)).toBe(200);
    await clients.oauth4webapiRevoke(target, 'crm', CLIENTS.crm, token);
    expect(await searchStatus(token)).toBe(401);
    expect(await cnamStatus(token)).toBe(401);
    const other = await stack.login('crm');
    expect(await searchStatus(other)).toBe(200);
    const revoked = stack.logs.filter((l) => l.fields.event === 'token_revoked');
    expect(revoked.at(-1)?.fields).toMatchObject({ clientId: 'crm', owner: 'crm', shared: true });
    expect(JSON.stringify(stack.logs)).not.toContain(token);
  });

  it("answers another client's live token as junk (200, RFC 7009 section 2.2), leaves it valid, and lets an admin revoke it", async () => {
    const token = await stack.login('crm');
    const ignored = await revoke(token, basicAuth('pbx', CLIENTS.pbx));
    const junk = await revoke('not-a-token', basicAuth('pbx', CLIENTS.pbx));
    expect([ignored.status, junk.status]).toEqual([200, 200]);
    expect([await ignored.text(), await junk.text()]).toEqual(['', '']);
    expect(ignored.headers.get('cache-control')).toBe(junk.headers.get('cache-control'));
    expect(await searchStatus(token)).toBe(200);
    const byAdmin = await revoke(token, basicAuth('ops', CLIENTS.ops));
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.headers.get('cache-control')).toBe('no-store');
    expect(await searchStatus(token)).toBe(401);
  });

  it('answers 200 for a token that is not ours or revoked already, and refuses bad client credentials', async () => {
    expect((await revoke('not-a-token', basicAuth('crm', CLIENTS.crm))).status).toBe(200);
    const token = await stack.login('crm');
    expect((await revoke(token, basicAuth('crm', CLIENTS.crm))).status).toBe(200);
    expect((await revoke(token, basicAuth('crm', CLIENTS.crm))).status).toBe(200);
    const wrong = await revoke(token, basicAuth('crm', 'wrong'));
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_client' });
    const missing = await fetch(`${stack.gateway.url}/oauth2/revoke`, {
      method: 'POST',
      headers: { authorization: basicAuth('crm', CLIENTS.crm), 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('revokes every token issued to a client so far (admin only); its next login works', async () => {
    const [first, second] = [await stack.login('pbx'), await stack.login('pbx')];
    const admin = await stack.login('ops');
    const call = (bearer: string, body: unknown) =>
      fetch(`${stack.gateway.url}/admin/tokens/revoke-client`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await call(first, { client_id: 'pbx' })).status).toBe(403);
    expect((await call(admin, { client: 'pbx' })).status).toBe(400);
    const unknown = await call(admin, { client_id: 'no-such-client' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await unknown.json()).toMatchObject({ status: 404, requestId: expect.any(String) });
    const res = await call(admin, { client_id: 'pbx' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ client_id: 'pbx', reach: 'process' });
    expect([await searchStatus(first), await searchStatus(second)]).toEqual([401, 401]);
    expect(await searchStatus(await stack.login('pbx'))).toBe(200);
    expect(await searchStatus(admin)).toBe(200);
  });

  it("answers an admin client's tokenIntrospection call: active with the client, scope and times", async () => {
    const token = await stack.login('crm');
    const answer = await clients.oauth4webapiIntrospect(target, 'ops', CLIENTS.ops, token);
    expect(answer).toEqual({
      active: true,
      client_id: 'crm',
      sub: 'crm',
      scope: 'SEARCH_contacts_watch',
      token_type: 'Bearer',
      exp: expect.any(Number),
      iat: expect.any(Number),
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(answer.exp! - answer.iat!).toBe(90000);
  });

  it('finds a revoked or made-up token inactive, saying nothing more', async () => {
    const token = await stack.login('crm');
    await clients.oauth4webapiRevoke(target, 'crm', CLIENTS.crm, token);
    expect(await clients.oauth4webapiIntrospect(target, 'ops', CLIENTS.ops, token)).toEqual({ active: false });
    expect(await clients.oauth4webapiIntrospect(target, 'ops', CLIENTS.ops, 'not-a-token')).toEqual({ active: false });
  });

  it('refuses a client that is not an admin, and wrong credentials, as OAuth errors', async () => {
    const token = await stack.login('crm');
    const notAdmin = await clients.oauth4webapiIntrospect(target, 'crm', CLIENTS.crm, token).catch((e: unknown) => e);
    expect(notAdmin).toBeInstanceOf(clients.oauth.ResponseBodyError);
    expect(notAdmin).toMatchObject({ status: 400, error: 'unauthorized_client' });
    const wrong = await clients.oauth4webapiIntrospect(target, 'ops', 'wrong', token).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 401 });
  });
});
