// Failed logins are limited per client id and address and per address (rate-limiter-flexible), answered 429 with
// Retry-After and the RateLimit fields of the policy that refused, logged with the client id and never the
// secret; the same client from another address still logs in.
import { Agent, fetch as undiciFetch, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth } from '../helpers/pbx.js';
import { rateLimitOf, type RateLimitReading } from '../helpers/rate-limit-fields.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

interface Attempt {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  rateLimit: RateLimitReading | null;
}

async function login(stack: Stack, address: string, clientId: string, secret: string): Promise<Attempt> {
  const res = await undiciFetch(`${stack.gateway.url}/token/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
  });
  await res.arrayBuffer();
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    contentType: res.headers.get('content-type'),
    rateLimit: rateLimitOf(res),
  };
}

describe('login brute force', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        TRUST_PROXY_HOPS: '1',
        LOGIN_FAILURES_PER_CLIENT: '5',
        LOGIN_FAILURES_PER_ADDRESS: '20',
        LOGIN_FAILURE_WINDOW_SECONDS: '600',
      },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers 429 with Retry-After after 5 wrong secrets for one client from one address, also to the right secret', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await login(stack, '203.0.113.1', 'crm', `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const right = await login(stack, '203.0.113.1', 'crm', CLIENTS.crm);
    expect(right.status).toBe(429);
    expect(right.contentType).toBe('application/problem+json');
    expect(Number(right.retryAfter)).toBeGreaterThan(590);
    expect(Number(right.retryAfter)).toBeLessThanOrEqual(600);
    // The policy that refused, as RateLimit fields; Retry-After is its `t`.
    expect(right.rateLimit).toMatchObject({ policy: 'login-client', quota: 5, window: 600, remaining: 0 });
    expect(right.rateLimit?.reset).toBe(Number(right.retryAfter));
    expect(right.rateLimit?.policies).toEqual({ 'login-address': { q: 20, w: 600 }, 'login-client': { q: 5, w: 600 } });
  });

  it('does not lock the same client out from another address', async () => {
    expect((await login(stack, '203.0.113.2', 'crm', CLIENTS.crm)).status).toBe(200);
  });

  it('stops a parallel burst of 3,000 wrong secrets after the limit: at most 5 are even checked', async () => {
    // 64 connections at once (more would only test the machine's listen backlog), all 3,000 requests queued at once.
    // undici's request(): the statuses are all it reads, at a fraction of fetch's cost per request.
    const agent = new Agent({ connections: 64 });
    const statuses = await Promise.all(
      Array.from({ length: 3000 }, async (_, i) => {
        const res = await request(`${stack.gateway.url}/token/login`, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.3' },
          body: `grant_type=client_credentials&client_id=pbx&client_secret=guess-${i}`,
        });
        await res.body.arrayBuffer();
        return res.statusCode;
      }),
    );
    await agent.close();
    const counts = { 401: 0, 429: 0 } as Record<number, number>;
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    expect(counts[401]).toBe(5);
    expect(counts[429]).toBe(2995);
    expect((await login(stack, '203.0.113.4', 'pbx', CLIENTS.pbx)).status).toBe(200);
  }, 300_000);

  it('limits one address across client ids (20 failures), whatever ids it tries', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) statuses.push((await login(stack, '203.0.113.5', `made-up-${i}`, 'nope')).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
    const refused = await login(stack, '203.0.113.5', 'ops', CLIENTS.ops);
    expect(refused.status).toBe(429);
    expect(refused.rateLimit).toMatchObject({ policy: 'login-address', quota: 20, remaining: 0 });
    expect((await login(stack, '203.0.113.6', 'ops', CLIENTS.ops)).status).toBe(200);
  });

  it('logs each failure with the client id and never the secret', async () => {
    const before = stack.logs.length;
    await login(stack, '203.0.113.7', 'ops', 'a-wrong-secret-123');
    await login(stack, '203.0.113.7', 'not-a-client', 'another-wrong-secret-456');
    const lines = stack.logs.slice(before).filter((l) => l.fields.event === 'login_failed');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 'warn', fields: { clientId: 'ops', reason: 'invalid_client' } });
    expect(lines[1]!.fields).toMatchObject({ knownClient: false });
    const text = JSON.stringify(stack.logs.slice(before));
    expect(text).not.toContain('a-wrong-secret-123');
    expect(text).not.toContain('another-wrong-secret-456');
    expect(text).not.toContain('203.0.113.7');
  });

  it('throttles failed Basic logins at the token endpoint as failed form logins, in one budget', async () => {
    const basic = (secret: string) =>
      undiciFetch(`${stack.gateway.url}/token/login`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth('crm', secret),
          'x-forwarded-for': '203.0.113.9',
        },
        body: 'grant_type=client_credentials',
      });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await basic('wrong-basic')).status);
    for (let i = 0; i < 2; i++) statuses.push((await login(stack, '203.0.113.9', 'crm', 'wrong-form')).status);
    statuses.push((await basic(CLIENTS.crm)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('logs a failed HTTP Basic login on the search and CNAM routes exactly as a failed form login', async () => {
    const before = stack.logs.length;
    for (const path of ['/v2/contacts/search?what=%2B442079460001', '/v2/contacts/cnam?what=%2B442079460001']) {
      const res = await fetch(`${stack.gateway.url}${path}`, {
        headers: { authorization: basicAuth('ops', 'basic-wrong-789') },
      });
      expect(res.status).toBe(401);
    }
    const unknown = await fetch(`${stack.gateway.url}/v2/contacts/search?what=%2B442079460001`, {
      headers: { authorization: basicAuth('no-such-client', 'basic-wrong-000') },
    });
    expect(unknown.status).toBe(401);
    const lines = stack.logs.slice(before).filter((l) => l.fields.event === 'login_failed');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      level: 'warn',
      fields: { clientId: 'ops', reason: 'invalid_client', scheme: 'basic' },
    });
    expect(lines[1]).toMatchObject({ fields: { clientId: 'ops', scheme: 'basic' } });
    expect(lines[2]!.fields).toMatchObject({ knownClient: false, scheme: 'basic' });
    expect(lines[2]!.fields.clientId).toBeUndefined();
    const text = JSON.stringify(stack.logs.slice(before));
    expect(text).not.toContain('basic-wrong-789');
    expect(text).not.toContain('no-such-client');
  });
});
