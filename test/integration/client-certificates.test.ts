// A client certificate as a client's identity on Node's HTTPS listener, with certificates made by openssl: curl with a
// certificate the clients file lists searches as its client (its log line and metrics name it, an admin's reaches the
// admin routes); one from another CA, an expired one, a revoked one (TLS_CLIENT_CRL_FILE) and an unmatched one are
// refused with problem+json naming no client and one log line.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../helpers/stack.js';
import { PBX_SPIFFE_ID, startMtlsStack } from '../helpers/mtls-stack.js';
import { curl } from '../helpers/tls-client.js';
import { hasOpenssl, TestPki, type Issued } from '../helpers/test-pki.js';

const SEARCH = '/v2/contacts/search?what=%2B442079460001';

describe.skipIf(!hasOpenssl())('client certificates on the HTTPS listener', () => {
  const pki = new TestPki();
  let stack: Stack;
  let base: string;
  const certs: Record<string, Issued> = {};
  const ca = () => pki.path('ca.pem');
  /** curl with the client certificate `name` (none: no certificate). */
  const as = (name: string | undefined, path: string, args: string[] = []) =>
    curl(`${base}${path}`, [
      '--cacert',
      ca(),
      ...(name ? ['--cert', certs[name]!.cert, '--key', certs[name]!.key] : []),
      ...args,
    ]);
  const refusals = () => stack.logs.filter((l) => l.fields.event === 'client_certificate_refused');

  beforeAll(async () => {
    pki.ca('other');
    const started = await startMtlsStack(pki, { TLS_CLIENT_CRL_FILE: pki.path('crls.pem') }, () => {
      certs.expired = pki.issue('expired', { subj: '/O=Example/CN=pbx', san: `URI:${PBX_SPIFFE_ID}`, days: -1 });
      certs.foreign = pki.issue('foreign', { subj: '/O=Example/CN=pbx', san: `URI:${PBX_SPIFFE_ID}`, ca: 'other' });
      certs.revoked = pki.issue('revoked', { subj: '/O=Example/CN=pbx', san: `URI:${PBX_SPIFFE_ID}` });
      // A client's certificate below an intermediate CA, sent with it by curl.
      const short = pki.deepChain('short', 2, { subj: '/O=Example/CN=pbx', san: `URI:${PBX_SPIFFE_ID}` });
      certs.short = { ...short.leaf, cert: short.chain };
      // With a CRL, OpenSSL wants one of every CA of a chain: the root's and the intermediate's, in one file.
      const crls = [pki.crl('ca', 'ca', [certs.revoked]), pki.crl('short-int1', 'short-int1', [])];
      writeFileSync(pki.path('crls.pem'), crls.map((path) => readFileSync(path, 'utf8')).join(''));
    });
    Object.assign(certs, started.certs);
    ({ stack, base } = started);
  });
  afterAll(async () => {
    await stack?.close();
    pki.remove();
  });

  it('searches as the client its certificate names, by SAN URI, fingerprint or subject', async () => {
    for (const [name, client] of [
      ['pbx', 'pbx'],
      ['crm', 'crm'],
      ['ops', 'ops'],
      ['short', 'pbx'],
    ]) {
      const answer = await as(name!, SEARCH);
      expect([name, answer.status]).toEqual([name, 200]);
      const line = stack.logs.findLast((l) => l.fields.event === 'request' && l.fields.route === '/v2/contacts/search');
      expect(line?.fields.clientId).toBe(client);
    }
    const cnam = await as('pbx', '/v2/contacts/cnam?what=%2B442079460001');
    expect(cnam.status).toBe(200);
    const metrics = await as(undefined, '/metrics');
    expect(metrics.body).toMatch(/callerid_gateway_client_searches_total\{client="pbx"/);
  });

  it("applies the client's admin flag: an admin's certificate reaches the admin routes, another's is forbidden", async () => {
    expect((await as('ops', '/admin/usage')).status).toBe(200);
    expect((await as('pbx', '/admin/usage')).status).toBe(403);
    expect((await as(undefined, '/admin/usage')).status).toBe(401);
  });

  it('refuses an unmatched, an expired and a foreign certificate with problem+json naming no client and one log line', async () => {
    for (const [name, reason] of [
      ['stranger', 'unmatched'],
      ['expired', 'expired'],
      ['foreign', 'unknown_ca'],
      ['revoked', 'revoked'],
    ] as const) {
      const before = refusals().length;
      const answer = await as(name, SEARCH, ['-i']);
      expect([name, answer.status]).toEqual([name, 401]);
      expect(answer.body).toMatch(/content-type: application\/problem\+json/i);
      expect(answer.body).not.toMatch(/pbx|crm|ops/);
      const lines = refusals().slice(before);
      expect(lines.map((l) => l.fields.reason)).toEqual([reason]);
      expect(lines[0]!.fields.certSha256).toBe(certs[name]!.sha256);
    }
  });
});
