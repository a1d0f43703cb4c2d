// RFC 8705 on Node's HTTPS listener: oauth4webapi discovers `tls_client_auth` and certificate-bound tokens, obtains a
// token with its client certificate (no secret), and the token carries `cnf.x5t#S256` of that certificate: it works
// over the same certificate and is refused (401 invalid_token) over another or none; POST /token/login takes the
// certificate too; introspection shows the `cnf`; a certificate of another client is no credential for this one.
import { readFileSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMtlsStack, type MtlsStack } from '../helpers/mtls-stack.js';
import { CLIENTS } from '../helpers/stack.js';
import { curl, curlGrant } from '../helpers/tls-client.js';
import { hasOpenssl, TestPki } from '../helpers/test-pki.js';

const SEARCH = '/v2/contacts/search?what=%2B442079460001';

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

describe.skipIf(!hasOpenssl())('certificate-bound tokens (RFC 8705)', () => {
  const pki = new TestPki();
  let m: MtlsStack;
  const ca = () => pki.path('ca.pem');
  /** oauth4webapi's fetch over a TLS connection with the client certificate `name` (none: without one). */
  const fetchAs = (name?: 'pbx' | 'crm') => {
    const cert = name && m.certs[name];
    const dispatcher = new Agent({
      connect: {
        ca: readFileSync(ca()),
        ...(cert ? { cert: readFileSync(cert.cert), key: readFileSync(cert.key) } : {}),
      },
    });
    return (url: string, init: RequestInit) =>
      undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher }) as unknown as Promise<Response>;
  };
  const search = (token: string, name?: 'pbx' | 'crm') =>
    fetchAs(name)(`${m.base}${SEARCH}`, { headers: { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    m = await startMtlsStack(pki);
  });
  afterAll(async () => {
    await m?.stack.close();
    pki.remove();
  });

  it('issues a token bound to the certificate oauth4webapi authenticated with, usable only over that certificate', async () => {
    const issuer = new URL(m.base);
    const options = { [oauth.customFetch]: fetchAs('pbx') };
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...options }),
    );
    expect(as.token_endpoint_auth_methods_supported).toContain('tls_client_auth');
    expect(as.tls_client_certificate_bound_access_tokens).toBe(true);
    const client: oauth.Client = { client_id: 'pbx' };
    const res = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.TlsClientAuth(),
      new URLSearchParams(),
      options,
    );
    const token = await oauth.processClientCredentialsResponse(as, client, res);
    const thumbprint = Buffer.from(m.certs.pbx.sha256, 'hex').toString('base64url');
    expect(claimsOf(token.access_token).cnf).toEqual({ 'x5t#S256': thumbprint });

    expect((await search(token.access_token, 'pbx')).status).toBe(200);
    for (const other of [undefined, 'crm'] as const) {
      const refused = await search(token.access_token, other);
      expect([other, refused.status]).toEqual([other, 401]);
      expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
    // Once verified, the token is known without the signature check: still refused without its certificate.
    expect((await search(token.access_token, 'pbx')).status).toBe(200);
    expect((await search(token.access_token)).status).toBe(401);
  });

  it('takes the certificate at POST /token/login for the client it names, and for no other', async () => {
    const login = (clientId: string) => curlGrant(`${m.base}/token/login`, { ca: ca(), clientId, cert: m.certs.pbx });
    const own = await login('pbx');
    expect(own.status).toBe(200);
    const token = (JSON.parse(own.body) as { access_token: string }).access_token;
    expect(claimsOf(token).cnf).toBeDefined();
    const other = await login('crm');
    expect(other.status).toBe(401);
    expect(JSON.parse(other.body)).toMatchObject({ error: 'invalid_client' });
  });

  it('shows the cnf of a bound token to an admin introspecting it, and none for an unbound one', async () => {
    const token = `${m.base}/oauth2/token`;
    const bound = await curlGrant(token, { ca: ca(), clientId: 'crm', cert: m.certs.crm });
    const unbound = await curlGrant(token, { ca: ca(), clientId: 'crm', secret: CLIENTS.crm });
    const introspect = async (answer: { body: string }) => {
      const { access_token } = JSON.parse(answer.body) as { access_token: string };
      const res = await curl(`${m.base}/oauth2/introspect`, [
        '--cacert',
        ca(),
        '-u',
        `ops:${CLIENTS.ops}`,
        '-d',
        `token=${access_token}`,
      ]);
      return JSON.parse(res.body) as { active: boolean; cnf?: unknown };
    };
    expect(await introspect(bound)).toMatchObject({
      active: true,
      cnf: { 'x5t#S256': Buffer.from(m.certs.crm.sha256, 'hex').toString('base64url') },
    });
    const plain = await introspect(unbound);
    expect([plain.active, plain.cnf]).toEqual([true, undefined]);
  });
});
