// The Node listener over HTTPS (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CLIENT_CA_FILE) with certificates made by openssl:
// searches and logins over TLS without a client certificate, a renewed server certificate served to new connections
// while a kept-alive one opened before keeps working, and what is closed without holding the listener: a plain-HTTP
// request to the TLS port and a handshake that stalls.
import { copyFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';
import { curl, curlGrant, httpsRequest } from '../helpers/tls-client.js';
import { hasOpenssl, TestPki } from '../helpers/test-pki.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Milliseconds until the server closes a raw TCP connection that sent `bytes` (nothing: a stalled handshake). */
function closedAfter(port: number, bytes: string): Promise<{ ms: number; received: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let received = '';
    const socket = connect(port, '127.0.0.1', () => {
      if (bytes) socket.write(bytes);
    });
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ ms: performance.now() - started, received }));
    setTimeout(() => reject(new Error('the connection was held open')), 10_000).unref();
  });
}

describe.skipIf(!hasOpenssl())('the Node listener over TLS', () => {
  const pki = new TestPki();
  let stack: Stack;
  let base: string;
  const ca = () => pki.path('ca.pem');

  beforeAll(async () => {
    pki.ca('ca');
    pki.server('server');
    pki.server('renewed');
    copyFileSync(pki.path('server.pem'), pki.path('live.pem'));
    copyFileSync(pki.path('server.key'), pki.path('live.key'));
    stack = await startStack({
      env: {
        TLS_CERT_FILE: pki.path('live.pem'),
        TLS_KEY_FILE: pki.path('live.key'),
        TLS_CLIENT_CA_FILE: ca(),
        HTTP_HEADERS_TIMEOUT_SECONDS: '1',
      },
    });
    base = stack.gateway.url;
  });
  afterAll(async () => {
    await stack?.close();
    pki.remove();
  });

  it('serves HTTPS on PORT, and a client without a certificate logs in and searches with its token', async () => {
    expect(base).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const login = await curlGrant(`${base}/oauth2/token`, { ca: ca(), clientId: 'crm', secret: CLIENTS.crm });
    expect(login.status).toBe(200);
    const token = (JSON.parse(login.body) as { access_token: string }).access_token;
    const search = await curl(`${base}/v2/contacts/search?what=%2B442079460001`, [
      '--cacert',
      ca(),
      '-H',
      `authorization: Bearer ${token}`,
    ]);
    expect(search.status).toBe(200);
    const none = await curl(`${base}/v2/contacts/search?what=%2B442079460001`, ['--cacert', ca()]);
    expect(none.status).toBe(401);
  });

  it('serves a renewed certificate to new connections while a kept-alive one opened before keeps working', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const first = await httpsRequest(`${base}/healthz`, { ca: ca(), agent });
    expect(first.status).toBe(200);
    const before = first.serverFingerprint;
    // cert-manager writes the new pair in place.
    copyFileSync(pki.path('renewed.key'), pki.path('live.key'));
    copyFileSync(pki.path('renewed.pem'), pki.path('live.pem'));
    let fresh = await httpsRequest(`${base}/healthz`, { ca: ca() });
    for (let i = 0; i < 40 && fresh.serverFingerprint === before; i++) {
      await sleep(100);
      fresh = await httpsRequest(`${base}/healthz`, { ca: ca() });
    }
    expect(fresh.serverFingerprint).not.toBe(before);
    expect(stack.logs.some((l) => l.fields.event === 'tls_reloaded')).toBe(true);
    const kept = await httpsRequest(`${base}/healthz`, { ca: ca(), agent });
    expect(kept.status).toBe(200);
    // The same connection, opened with the certificate before the renewal.
    expect(kept.socket).toBe(first.socket);
    agent.destroy();
  });

  it('keeps the last good certificate when a renewal does not load', async () => {
    const served = (await httpsRequest(`${base}/healthz`, { ca: ca() })).serverFingerprint;
    // A key that is not the certificate's (a renewal caught half-written).
    copyFileSync(pki.path('server.key'), pki.path('live.key'));
    for (let i = 0; i < 40 && !stack.logs.some((l) => l.fields.event === 'tls_reload_refused'); i++) await sleep(100);
    expect(stack.logs.some((l) => l.fields.event === 'tls_reload_refused')).toBe(true);
    const after = await httpsRequest(`${base}/healthz`, { ca: ca() });
    expect([after.status, after.serverFingerprint]).toEqual([200, served]);
    copyFileSync(pki.path('renewed.key'), pki.path('live.key'));
  });

  it('refuses a certificate at the end of a chain of 50 (one log line) without holding the listener', async () => {
    const { leaf, chain } = pki.deepChain('deep', 50, { subj: '/CN=pbx' });
    const started = performance.now();
    const answer = await curl(`${base}/v2/contacts/search?what=%2B442079460001`, [
      '--cacert',
      ca(),
      '--cert',
      chain,
      '--key',
      leaf.key,
    ]);
    expect(answer.status).toBe(401);
    expect(performance.now() - started).toBeLessThan(2000);
    const refused = stack.logs.filter((l) => l.fields.event === 'client_certificate_refused');
    expect(refused.map((l) => l.fields.reason)).toEqual(['chain_too_long']);
    expect((await httpsRequest(`${base}/healthz`, { ca: ca() })).status).toBe(200);
    // Fifty certificates from openssl come first, outside the 2 s the refusal is held to: on a busy machine they
    // alone may take longer than the default 20 s.
  }, 60_000);

  it('closes a plain-HTTP request to the TLS port at once, and keeps serving', async () => {
    const { port } = stack.gateway;
    const closed = await closedAfter(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(closed.ms).toBeLessThan(1000);
    expect(closed.received).not.toContain('HTTP/1.1 5');
    expect((await httpsRequest(`${base}/healthz`, { ca: ca() })).status).toBe(200);
  });

  it('closes a handshake that stalls within the header timeout, without holding the listener meanwhile', async () => {
    const { port } = stack.gateway;
    const stalled = closedAfter(port, '');
    await sleep(100);
    const started = performance.now();
    expect((await httpsRequest(`${base}/healthz`, { ca: ca() })).status).toBe(200);
    expect(performance.now() - started).toBeLessThan(500);
    const { ms } = await stalled;
    // HTTP_HEADERS_TIMEOUT_SECONDS=1 bounds the handshake too (Node's own default is 120 s).
    expect(ms).toBeGreaterThan(900);
    expect(ms).toBeLessThan(3000);
  });
});
