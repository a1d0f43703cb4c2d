// One reading of HTTP Basic on every route over a real socket: the same header is accepted or refused alike on
// POST /oauth2/token, POST /token/login, the JSON search and CNAM; a malformed one is a 401 counted once toward the
// failed-login throttle, whichever route it came to; only application/x-www-form-urlencoded is a form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { basicAuth } from '../helpers/pbx.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

/** Secrets a form-encoding client sends differently from a raw one. */
const ODD = { odd: 'odd:se+cr%41et é/0123', colons: 'with:colons:only-0123' } as const;
const formEncoded = (text: string) => new URLSearchParams({ x: text }).toString().slice(2);

describe('one HTTP Basic parser for every route', () => {
  let stack: Stack;
  const NUMBER = '%2B442079460001';
  async function statuses(authorization: string, address: string): Promise<Record<string, number>> {
    const post = (path: string) =>
      fetch(`${stack.gateway.url}${path}`, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': address,
        },
        body: 'grant_type=client_credentials',
      });
    const get = (path: string) =>
      fetch(`${stack.gateway.url}${path}?what=${NUMBER}`, { headers: { authorization, 'x-forwarded-for': address } });
    const answers = {
      oauth2Token: await post('/oauth2/token'),
      tokenLogin: await post('/token/login'),
      search: await get('/v2/contacts/search'),
      cnam: await get('/v2/contacts/cnam'),
    };
    await Promise.all(Object.values(answers).map((res) => res.arrayBuffer()));
    return Object.fromEntries(Object.entries(answers).map(([route, res]) => [route, res.status]));
  }
  const all = (status: number) => ({ oauth2Token: status, tokenLogin: status, search: status, cnam: status });

  beforeAll(async () => {
    const registered = { ...CLIENTS, ...ODD };
    const clients = await Promise.all(
      Object.entries(registered).map(async ([id, secret]) => `${id}:${await sha256Hex(secret)}`),
    );
    stack = await startStack({
      env: {
        GATEWAY_CLIENTS: clients.join(','),
        TRUST_PROXY_HOPS: '1',
        LOGIN_FAILURES_PER_ADDRESS: '4',
        LOGIN_FAILURES_PER_CLIENT: '10',
        LOGIN_FAILURE_WINDOW_SECONDS: '600',
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('accepts the RFC 6749 section 2.3.1 form everywhere, and a raw secret with colons only (it reads the same)', async () => {
    expect(await statuses(basicAuth('odd', formEncoded(ODD.odd)), '198.51.100.1')).toEqual(all(200));
    expect(await statuses(basicAuth('odd', encodeURIComponent(ODD.odd)), '198.51.100.1')).toEqual(all(200));
    expect(await statuses(basicAuth('colons', ODD.colons), '198.51.100.1')).toEqual(all(200));
  });

  it('refuses a raw secret with + or % alike everywhere: the standard reads it otherwise', async () => {
    expect(await statuses(basicAuth('odd', ODD.odd), '198.51.100.2')).toEqual(all(401));
  });

  it('answers a malformed header 401 on every route, counting each once toward the throttle of its address', async () => {
    const address = '198.51.100.3';
    const before = stack.logs.length;
    // LOGIN_FAILURES_PER_ADDRESS=4: the four routes take the four attempts, the fifth is throttled.
    expect(await statuses('Basic !!!', address)).toEqual(all(401));
    const failed = stack.logs.slice(before).filter((l) => l.fields.event === 'login_failed');
    expect(failed).toHaveLength(4);
    expect(failed.every((l) => l.fields.knownClient === false && l.fields.scheme === 'basic')).toBe(true);
    expect((await statuses(`Basic ${btoa('no-colon')}`, address)).oauth2Token).toBe(429);
  });

  it('answers the token endpoint as RFC 6749 section 5.2 has it: invalid_client and a Basic challenge', async () => {
    const res = await fetch(`${stack.gateway.url}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${btoa(':')}`,
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': '198.51.100.4',
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm="callerid-gateway"/);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('takes a form only as application/x-www-form-urlencoded by type and subtype, parameters apart', async () => {
    const post = (contentType: string) =>
      fetch(`${stack.gateway.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': contentType, 'x-forwarded-for': '198.51.100.5' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'colons', client_secret: ODD.colons }),
      });
    const evil = await post('application/x-www-form-urlencoded-evil');
    expect(evil.status).toBe(400);
    expect(await evil.json()).toMatchObject({ error: 'invalid_request' });
    const upper = await post('Application/X-WWW-Form-Urlencoded ; charset="UTF-8"');
    expect(upper.status).toBe(200);
  });
});
