import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

const BOTH = '+442079460001'; // listed by swissdir and openbook
const UNLISTED = '+442079460999';

async function problem(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({
    status: res.status,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(body.requestId).toBe(res.headers.get('x-request-id'));
  return body;
}

describe('gateway over real sockets', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { UPSTREAM_TIMEOUT_MS: '1000' } });
  });
  afterAll(async () => {
    await stack.close();
  });
  afterEach(() => {
    stack.simulator.controls.setFaults({
      errorRate: 0,
      hangRate: 0,
      latencyMs: 0,
      tokenErrorRate: 0,
      revokeTokensAfterMs: null,
    });
  });

  describe('POST /token/login', () => {
    const login = (fields: Record<string, string>, type = 'application/x-www-form-urlencoded') =>
      fetch(`${stack.gateway.url}/token/login`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: new URLSearchParams(fields).toString(),
      });

    it('issues a gateway token in exactly the upstream token shape', async () => {
      const res = await login({ grant_type: 'client_credentials', client_id: 'crm', client_secret: CLIENTS.crm });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.json();
      expect(body).toEqual({
        access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
        token_type: 'Bearer',
        expires_in: '90000',
        scope: [{ service: 'SEARCH_contacts_watch', permission: 'READ', orderId: null }],
        uniqueId: null,
        clientId: 'crm',
      });
    });

    it("keeps the upstream's dialect byte for byte: its members in its order, expires_in a string, scope a list", async () => {
      const res = await login({ grant_type: 'client_credentials', client_id: 'crm', client_secret: CLIENTS.crm });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const text = await res.text();
      const token = (JSON.parse(text) as { access_token: string }).access_token;
      expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(text).toBe(
        `{"access_token":"${token}","token_type":"Bearer","expires_in":"90000",` +
          '"scope":[{"service":"SEARCH_contacts_watch","permission":"READ","orderId":null}],"uniqueId":null,"clientId":"crm"}',
      );
    });

    it('answers 401 invalid_client for a wrong secret or an unknown client', async () => {
      for (const fields of [
        { grant_type: 'client_credentials', client_id: 'crm', client_secret: 'wrong' },
        { grant_type: 'client_credentials', client_id: 'nobody', client_secret: CLIENTS.crm },
      ]) {
        const res = await login(fields);
        expect(res.status).toBe(401);
        // RFC 9110 section 11.6.1: a 401 carries a challenge; the token endpoint's is HTTP Basic.
        expect(res.headers.get('www-authenticate')).toBe('Basic realm="callerid-gateway", charset="UTF-8"');
        expect(await problem(res)).toMatchObject({ error: 'invalid_client' });
      }
    });

    const basicLogin = (id: string, secret: string, fields: Record<string, string> = {}) =>
      fetch(`${stack.gateway.url}/token/login`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', ...fields }).toString(),
      });

    it('takes the client credentials as HTTP Basic (client_secret_basic, RFC 6749 section 2.3.1)', async () => {
      const res = await basicLogin('crm', CLIENTS.crm);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ token_type: 'Bearer', clientId: 'crm' });
      const wrong = await basicLogin('crm', 'wrong');
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic /);
      expect(await problem(wrong)).toMatchObject({ error: 'invalid_client' });
      const malformed = await fetch(`${stack.gateway.url}/token/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic !!!' },
        body: 'grant_type=client_credentials',
      });
      expect(malformed.status).toBe(401);
      expect(malformed.headers.get('www-authenticate')).toMatch(/^Basic /);
    });

    it('answers 400 invalid_request for credentials as Basic and in the form at once', async () => {
      const both: Record<string, string>[] = [{ client_id: 'crm', client_secret: CLIENTS.crm }, { client_id: 'crm' }];
      for (const fields of both) {
        const res = await basicLogin('crm', CLIENTS.crm, fields);
        expect(res.status).toBe(400);
        expect(await problem(res)).toMatchObject({ error: 'invalid_request' });
      }
    });

    it('answers 400 for a wrong grant, a missing field or a non-form body', async () => {
      const wrongGrant = await login({ grant_type: 'password', client_id: 'crm', client_secret: CLIENTS.crm });
      expect(wrongGrant.status).toBe(400);
      expect(await problem(wrongGrant)).toMatchObject({ error: 'unsupported_grant_type' });
      const missing = await login({ grant_type: 'client_credentials', client_id: 'crm' });
      expect(missing.status).toBe(400);
      expect(await problem(missing)).toMatchObject({ error: 'invalid_request' });
      const json = await login({ grant_type: 'client_credentials' }, 'application/json');
      expect(json.status).toBe(400);
      expect(await problem(json)).toMatchObject({ error: 'invalid_request' });
    });

    it('answers 405 with Allow for another method', async () => {
      const res = await fetch(`${stack.gateway.url}/token/login`);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toContain('POST');
      await problem(res);
    });
  });

  describe('GET /v2/contacts/search', () => {
    it('passes the upstream JSON through unchanged for a national-format number', async () => {
      const token = await stack.login();
      const res = await stack.search('020 7946 0001', token);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await res.json()) as {
        query: { what: string };
        total: number;
        results: { provider: { id: string } }[];
      };
      expect(body.query.what).toBe(BOTH);
      expect(body.total).toBe(2);
      expect(body.results.map((r) => r.provider.id).sort()).toEqual(['openbook', 'swissdir']);
    });

    it('answers 200 with no results for an unlisted number', async () => {
      const res = await stack.search(UNLISTED, await stack.login());
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ total: 0, results: [] });
    });

    it('requires a bearer token: 401 with WWW-Authenticate for none, a bad one, or a foreign one', async () => {
      const before = stack.simulator.controls.stats().searchCalls;
      const none = await fetch(`${stack.gateway.url}/v2/contacts/search?what=${encodeURIComponent(BOTH)}`);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
      await problem(none);
      for (const auth of ['Bearer nonsense', 'Basic Y3JtOnNlY3JldA==', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2ln']) {
        const res = await fetch(`${stack.gateway.url}/v2/contacts/search?what=${encodeURIComponent(BOTH)}`, {
          headers: { authorization: auth },
        });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      expect(stack.simulator.controls.stats().searchCalls).toBe(before);
    });

    it('refuses impossible numbers with 400 and never calls the upstream', async () => {
      const token = await stack.login();
      const before = stack.simulator.controls.stats().searchCalls;
      for (const what of ['', 'abc', '+', '12', '0'.repeat(50), 'ab\u0001cd', '020 7946 0001 0001 0001']) {
        const res = await stack.search(what, token);
        expect(res.status, JSON.stringify(what)).toBe(400);
        await problem(res);
      }
      const noParam = await fetch(`${stack.gateway.url}/v2/contacts/search`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(noParam.status).toBe(400);
      expect(stack.simulator.controls.stats().searchCalls).toBe(before);
    });

    it("never forwards the caller's Authorization to the upstream", async () => {
      const token = await stack.login();
      stack.simulator.controls.resetStats();
      const res = await stack.search('020 7946 0002', token);
      expect(res.status).toBe(200);
      const seen = stack.simulator.controls.stats().authorizationsSeen;
      expect(seen.length).toBeGreaterThan(0);
      for (const auth of seen) expect(auth).not.toContain(token);
    });

    it('recovers from an early upstream token revocation with one refresh', async () => {
      const token = await stack.login();
      expect((await stack.search('020 7946 0003', token)).status).toBe(200);
      stack.simulator.controls.resetStats();
      stack.simulator.controls.revokeAllTokens();
      const res = await stack.search('0113 496 0004', token);
      expect(res.status).toBe(200);
      expect(stack.simulator.controls.stats().tokenCalls).toBe(1);
    });

    it('maps an upstream 500 to 502 problem+json without upstream details', async () => {
      stack.simulator.controls.setFaults({ errorRate: 1 });
      const res = await stack.search('0161 496 0005', await stack.login());
      expect(res.status).toBe(502);
      const body = await problem(res);
      expect(JSON.stringify(body)).not.toMatch(/internal_error|contact support|4960005/);
    });

    it('answers an upstream hang with 504 within the timeout', async () => {
      stack.simulator.controls.setFaults({ hangRate: 1 });
      const token = await stack.login();
      const started = Date.now();
      const res = await stack.search('0113 496 0006', token);
      const elapsed = Date.now() - started;
      expect(res.status).toBe(504);
      await problem(res);
      expect(elapsed).toBeLessThan(1000 + 1500); // UPSTREAM_TIMEOUT_MS=1000 above, plus scheduling slack
    });

    it('answers 503 when no upstream token can be obtained', async () => {
      stack.simulator.controls.revokeAllTokens();
      stack.simulator.controls.setFaults({ tokenErrorRate: 1 });
      const res = await stack.search('020 7946 0004', await stack.login());
      expect(res.status).toBe(503);
      await problem(res);
    });

    it('answers unknown routes with 404 problem+json', async () => {
      const res = await fetch(`${stack.gateway.url}/v1/contacts/search?what=1`);
      expect(res.status).toBe(404);
      await problem(res);
    });

    it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
      const ok = await fetch(`${stack.gateway.url}/nope`, { headers: { 'x-request-id': 'abc-123' } });
      expect(ok.headers.get('x-request-id')).toBe('abc-123');
      const bad = await fetch(`${stack.gateway.url}/nope`, { headers: { 'x-request-id': 'a b<c>' } });
      expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });
});
