// Cloudflare's mutual TLS in workerd: the certificate the edge verified (`request.cf.tlsClientAuth`) is a client's
// identity as on Node: a search by certificate alone as its client, an unverified or unmatched one refused naming no
// client, and RFC 8705's `tls_client_auth` at POST /oauth2/token issuing a token bound to the certificate, refused
// over another certificate or none, sent raw and by oauth4webapi (its customFetch adds the `cf` object).
import * as oauth from 'oauth4webapi';
import { beforeEach, describe, expect, it } from 'vitest';
import { isolate, simulator, type Isolate } from './control.js';

const PBX = 'AB'.repeat(32);
const OTHER = 'CD'.repeat(32);
const CLIENTS_JSON = JSON.stringify({
  clients: [
    { id: 'pbx', secrets: [{ hash: `sha256:${'0'.repeat(64)}` }], certificates: [{ sha256: PBX }] },
    { id: 'ops', secrets: [{ hash: `sha256:${'1'.repeat(64)}` }], certificates: [{ subject: 'CN=ops,O=Example' }] },
  ],
});
const SEARCH = '/v2/contacts/search?what=%2B442079460001';

/** `request.cf` as Cloudflare fills it for a client certificate (its fields are strings). */
const cf = (fingerprint: string, verified = 'SUCCESS', subject = 'CN=pbx,O=Example') => ({
  tlsClientAuth: {
    certPresented: '1',
    certVerified: verified,
    certRevoked: '0',
    certFingerprintSHA256: fingerprint.toLowerCase(),
    certSubjectDNRFC2253: subject,
  },
});

/** RFC 8705's `x5t#S256` of the certificate whose SHA-256 is `fingerprint` (hex). */
const thumbprintOf = (fingerprint: string) =>
  btoa(String.fromCharCode(...fingerprint.match(/../g)!.map((byte) => parseInt(byte, 16))))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

describe('cf.tlsClientAuth as the client certificate on Workers', () => {
  let worker: Isolate;
  const send = async (path: string, init: RequestInit & { cf?: unknown } = {}) =>
    (await worker.request(path, init)).res;

  beforeEach(async () => {
    await simulator.reset();
    worker = await isolate({ GATEWAY_CLIENTS: '', GATEWAY_ADMIN_CLIENTS: '', GATEWAY_CLIENTS_JSON: CLIENTS_JSON });
  });

  it('searches as the client a verified certificate names, by fingerprint or subject', async () => {
    expect((await send(SEARCH, { cf: cf(PBX) })).status).toBe(200);
    expect((await send(SEARCH, { cf: cf(OTHER, 'SUCCESS', 'CN=ops,O=Example') })).status).toBe(200);
  });

  it('refuses an unverified or unmatched certificate with problem+json naming no client', async () => {
    for (const request of [cf(PBX, 'FAILED:certificate has expired'), cf(OTHER, 'SUCCESS', 'CN=stranger')]) {
      const res = await send(SEARCH, { cf: request });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.text()).not.toMatch(/pbx|ops/);
    }
  });

  it('issues a token bound to the certificate with tls_client_auth, refused over another or none', async () => {
    const res = await send('/oauth2/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=pbx',
      cf: cf(PBX),
    });
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    const claims = JSON.parse(atob(access_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/'))) as {
      cnf?: Record<string, string>;
    };
    expect(claims.cnf?.['x5t#S256']).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const bearer = { authorization: `Bearer ${access_token}` };
    expect((await send(SEARCH, { headers: bearer, cf: cf(PBX) })).status).toBe(200);
    expect((await send(SEARCH, { headers: bearer, cf: cf(OTHER) })).status).toBe(401);
    expect((await send(SEARCH, { headers: bearer })).status).toBe(401);
  });

  it('oauth4webapi obtains a token bound to the certificate with tls_client_auth, usable only over that certificate', async () => {
    /** oauth4webapi's requests, to the Worker's fetch handler, over a connection with the certificate `tls` (or none). */
    const over = (tls?: ReturnType<typeof cf>) => ({
      // What oauth4webapi hands over is a RequestInit (a body as a string, bytes or a form).
      [oauth.customFetch]: async (url: string, options: unknown) => {
        const { pathname, search } = new URL(url);
        const init = options as RequestInit;
        return send(pathname + search, tls ? { ...init, cf: tls } : init);
      },
    });
    const issuer = new URL('https://callerid.test');
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...over(cf(PBX)) }),
    );
    expect(as.token_endpoint_auth_methods_supported).toContain('tls_client_auth');
    expect(as.tls_client_certificate_bound_access_tokens).toBe(true);
    const client: oauth.Client = { client_id: 'pbx' };
    const grant = await oauth.clientCredentialsGrantRequest(
      as,
      client,
      oauth.TlsClientAuth(),
      new URLSearchParams(),
      over(cf(PBX)),
    );
    const token = await oauth.processClientCredentialsResponse(as, client, grant);
    const payload = token.access_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/');
    expect((JSON.parse(atob(payload)) as { cnf?: unknown }).cnf).toEqual({ 'x5t#S256': thumbprintOf(PBX) });

    const searchOver = (tls?: ReturnType<typeof cf>) =>
      oauth.protectedResourceRequest(
        token.access_token,
        'GET',
        new URL(SEARCH, issuer),
        undefined,
        undefined,
        over(tls),
      );
    expect((await searchOver(cf(PBX))).status).toBe(200);
    for (const other of [cf(OTHER, 'SUCCESS', 'CN=ops,O=Example'), undefined]) {
      const refused: unknown = await searchOver(other).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
      expect(refused).toMatchObject({
        status: 401,
        cause: [{ scheme: 'bearer', parameters: { error: 'invalid_token' } }],
      });
    }
  });
});
