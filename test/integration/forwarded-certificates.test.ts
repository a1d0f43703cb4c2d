// A client certificate forwarded by a TLS-terminating proxy (TLS_CLIENT_CERT_HEADER) on Node, with certificates made
// by openssl: a URL-encoded PEM as nginx's $ssl_client_escaped_cert sends it, verified by the gateway against
// TLS_CLIENT_CA_FILE, and Envoy's X-Forwarded-Client-Cert (`Hash=`/`URI=`, or `Cert=`), the element the trusted hop
// wrote; a header that did not come through the trusted hop is ignored with a log line, a malformed one too, and one of
// 1 MiB is refused by the server's header bound; a token obtained through the header is bound to its certificate.
import { readFileSync } from 'node:fs';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMtlsStack, type MtlsStack } from '../helpers/mtls-stack.js';
import { hasOpenssl, TestPki, type Issued } from '../helpers/test-pki.js';
import { nginxRequirement, startTlsNginx } from '../helpers/nginx.js';
import { checkRequirement } from '../helpers/requires.js';
import { curl } from '../helpers/tls-client.js';

const SEARCH = '/v2/contacts/search?what=%2B442079460001';
const escaped = (cert: Issued) => encodeURIComponent(readFileSync(cert.cert, 'utf8'));
/** The proxy's own address (TLS_CLIENT_CERT_HEADER_FROM): every other loopback address is a client's. */
const PROXY_ADDRESS = '127.0.0.2';
const fromProxy = new Agent({ localAddress: PROXY_ADDRESS });

describe.skipIf(!hasOpenssl())('client certificates forwarded by a trusted proxy', () => {
  const pki = new TestPki();
  const xfccPki = new TestPki();
  let pem: MtlsStack;
  let xfcc: MtlsStack;
  const extra: Record<string, Issued> = {};
  /** A request as the proxy sends it: from its address. */
  const get = (m: MtlsStack, headers: Record<string, string>, path = SEARCH) =>
    undiciFetch(`${m.base}${path}`, { headers, dispatcher: fromProxy });
  /** A request from a client that reaches the gateway itself (127.0.0.1). */
  const direct = (m: MtlsStack, headers: Record<string, string>) => fetch(`${m.base}${SEARCH}`, { headers });
  const ignored = (m: MtlsStack) => m.stack.logs.filter((l) => l.fields.event === 'client_cert_header_ignored');

  beforeAll(async () => {
    const behindProxy = {
      TLS_CERT_FILE: '',
      TLS_KEY_FILE: '',
      TRUST_PROXY_HOPS: '1',
      TLS_CLIENT_CERT_HEADER_FROM: PROXY_ADDRESS,
    };
    pem = await startMtlsStack(pki, { ...behindProxy, TLS_CLIENT_CERT_HEADER: 'X-SSL-Client-Cert' }, () => {
      pki.ca('other');
      extra.foreign = pki.issue('foreign', {
        subj: '/CN=pbx',
        san: 'URI:spiffe://example.org/ns/voice/sa/pbx',
        ca: 'other',
      });
      extra.expired = pki.issue('expired', {
        subj: '/CN=pbx',
        san: 'URI:spiffe://example.org/ns/voice/sa/pbx',
        days: -1,
      });
    });
    xfcc = await startMtlsStack(xfccPki, { ...behindProxy, TLS_CLIENT_CERT_HEADER: 'x-forwarded-client-cert' });
  });
  afterAll(async () => {
    await pem?.stack.close();
    await xfcc?.stack.close();
    pki.remove();
    xfccPki.remove();
  });

  it("maps nginx's URL-encoded PEM from the trusted hop to its client, and verifies it against the CA itself", async () => {
    const ok = await get(pem, { 'x-ssl-client-cert': escaped(pem.certs.pbx), 'x-forwarded-for': '192.0.2.7' });
    expect(ok.status).toBe(200);
    const line = pem.stack.logs.findLast((l) => l.fields.event === 'request');
    expect(line?.fields.clientId).toBe('pbx');
    for (const [name, reason] of [
      ['foreign', 'unknown_ca'],
      ['expired', 'expired'],
    ] as const) {
      const refused = await get(pem, { 'x-ssl-client-cert': escaped(extra[name]!), 'x-forwarded-for': '192.0.2.7' });
      expect([name, refused.status, refused.headers.get('content-type')]).toEqual([
        name,
        401,
        'application/problem+json',
      ]);
      const last = pem.stack.logs.findLast((l) => l.fields.event === 'client_certificate_refused');
      expect(last?.fields.reason).toBe(reason);
    }
  });

  it.skipIf(!checkRequirement(nginxRequirement()))(
    'maps the certificate a real nginx terminating TLS forwards, and ignores the same header sent around it',
    async () => {
      const nginx = await startTlsNginx({
        dir: pki.dir,
        cert: pki.path('server.pem'),
        key: pki.path('server.key'),
        clientCa: pki.path('ca.pem'),
        upstream: pem.base,
        header: 'X-SSL-Client-Cert',
        bind: PROXY_ADDRESS,
      });
      try {
        const tls = ['--cacert', pki.path('ca.pem'), '--cert', pem.certs.crm.cert, '--key', pem.certs.crm.key];
        expect((await curl(`${nginx.url}${SEARCH}`, tls)).status).toBe(200);
        expect(pem.stack.logs.findLast((l) => l.fields.event === 'request')?.fields.clientId).toBe('crm');
        expect((await curl(`${nginx.url}${SEARCH}`, ['--cacert', pki.path('ca.pem')])).status).toBe(401);
        const before = ignored(pem).length;
        const around = await curl(`${pem.base}${SEARCH}`, ['-H', `x-ssl-client-cert: ${escaped(pem.certs.crm)}`]);
        expect(around.status).toBe(401);
        expect(
          ignored(pem)
            .slice(before)
            .map((l) => l.fields.reason),
        ).toEqual(['untrusted_peer']);
      } finally {
        await nginx.stop();
      }
    },
  );

  it('ignores the header from a client that reaches the gateway itself, with X-Forwarded-For or without: a log line, not one per request', async () => {
    const before = ignored(pem).length;
    for (let i = 0; i < 50; i++) {
      // With X-Forwarded-For or without: a header says nothing of who connected.
      const forged = { 'x-ssl-client-cert': escaped(pem.certs.pbx), 'x-forwarded-for': '192.0.2.7' };
      const res = await direct(pem, i % 2 === 0 ? forged : { 'x-ssl-client-cert': forged['x-ssl-client-cert'] });
      expect(res.status).toBe(401);
    }
    // One line every 10 s at most (the nginx test may have written this window's line already).
    expect(ignored(pem).length - before).toBeLessThanOrEqual(1);
    expect(ignored(pem).map((l) => l.fields.reason)).toContain('untrusted_peer');
  });

  it('refuses a forwarded PEM of 1 MiB at the header bound, without a 5xx', async () => {
    const huge = encodeURIComponent(readFileSync(pem.certs.pbx.cert, 'utf8')).padEnd(1024 * 1024, 'A');
    const res = await get(pem, { 'x-ssl-client-cert': huge, 'x-forwarded-for': '192.0.2.7' });
    expect(res.status).toBe(431);
    expect((await get(pem, { 'x-forwarded-for': '192.0.2.7' })).status).toBe(401);
  });

  it("maps Envoy's XFCC element of the trusted hop by Hash and URI, or by its Cert, and ignores a malformed one", async () => {
    const { certs } = xfcc;
    const hop = 'By=spiffe://example.org/ns/edge/sa/envoy';
    const asClient = async (value: string) => {
      const res = await get(xfcc, { 'x-forwarded-client-cert': value, 'x-forwarded-for': '192.0.2.7' });
      return res.status === 200
        ? xfcc.stack.logs.findLast((l) => l.fields.event === 'request')?.fields.clientId
        : res.status;
    };
    expect(await asClient(`${hop};Hash=${certs.pbx.sha256};URI=spiffe://example.org/ns/voice/sa/pbx`)).toBe('pbx');
    expect(await asClient(`${hop};Hash=${certs.crm.sha256}`)).toBe('crm');
    expect(await asClient(`${hop};Cert="${escaped(certs.ops)}";Subject="CN=ops,O=Example\\, Inc."`)).toBe('ops');
    // An element the client wrote itself, left of the one the trusted hop appended, is not believed.
    expect(await asClient(`Hash=${certs.pbx.sha256}, ${hop};Hash=${certs.crm.sha256}`)).toBe('crm');
    const before = ignored(xfcc).length;
    expect(await asClient('Hash=zz;URI="unterminated')).toBe(401);
    expect(
      ignored(xfcc)
        .slice(before)
        .map((l) => l.fields.reason),
    ).toEqual(['malformed']);
  });

  it('binds a token obtained with the forwarded certificate to it', async () => {
    const header = {
      'x-forwarded-client-cert': `Hash=${xfcc.certs.pbx.sha256};URI=spiffe://example.org/ns/voice/sa/pbx`,
    };
    const proxied = { ...header, 'x-forwarded-for': '192.0.2.7' };
    const res = await undiciFetch(`${xfcc.base}/oauth2/token`, {
      method: 'POST',
      headers: { ...proxied, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=pbx',
      dispatcher: fromProxy,
    });
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    const bearer = { authorization: `Bearer ${access_token}` };
    expect((await get(xfcc, { ...bearer, ...proxied })).status).toBe(200);
    expect((await get(xfcc, { ...bearer, 'x-forwarded-for': '192.0.2.7' })).status).toBe(401);
  });
});
