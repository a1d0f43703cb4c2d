// A real Kamailio (config/kamailio/cnam-lookup.cfg with CNAM_CLIENT_CERT, CNAM_CLIENT_KEY and CNAM_CA) asks the
// gateway's CNAM route over HTTPS, presenting a client certificate and no credentials in the URL; the PBX's client
// is known to the gateway only by that certificate. Certificates made by openssl. Needs the Debian packages kamailio,
// kamailio-utils-modules (http_client) and sip-tester (sipp).
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kamailioReady, startKamailio, type RunningKamailio } from '../helpers/kamailio.js';
import { PBX_SPIFFE_ID, startMtlsStack, type MtlsStack } from '../helpers/mtls-stack.js';
import { hasOpenssl, TestPki } from '../helpers/test-pki.js';
import { curl } from '../helpers/tls-client.js';

describe.skipIf(!(hasOpenssl() && kamailioReady()))("Kamailio presents the PBX's client certificate", () => {
  const pki = new TestPki();
  let mtls: MtlsStack;
  const started: RunningKamailio[] = [];
  /** Kamailio presenting the certificate `name` of the PKI to the gateway's CNAM route. */
  const kamailioWith = async (name: 'pbx' | 'stranger') => {
    const kamailio = await startKamailio({
      CNAM_URL: new URL('/v2/contacts/cnam', mtls.base).href,
      CNAM_CLIENT_CERT: mtls.certs[name].cert,
      CNAM_CLIENT_KEY: mtls.certs[name].key,
      CNAM_CA: pki.path('ca.pem'),
    });
    started.push(kamailio);
    return kamailio;
  };
  const requests = () => mtls.stack.logs.filter((l) => l.fields.event === 'request');

  beforeAll(async () => {
    // The pbx client has no secret: its SPIFFE id in the certificate is all the gateway knows it by.
    const clients = pki.path('pbx-by-certificate.json');
    mtls = await startMtlsStack(pki, { GATEWAY_CLIENTS_FILE: clients }, () =>
      writeFileSync(clients, JSON.stringify({ clients: [{ id: 'pbx', certificates: [{ san_uri: PBX_SPIFFE_ID }] }] })),
    );
  });

  afterAll(async () => {
    for (const kamailio of started) await kamailio.stop();
    await mtls?.stack.close();
    pki.remove();
  });

  it('puts the caller name the gateway answers over HTTPS into the From display name', async () => {
    const kamailio = await kamailioWith('pbx');
    const invite = await kamailio.callFrom('+442079460002');
    expect(invite).toMatch(/^From: "Muller Jonas" <sip:\+442079460002@127\.0\.0\.1:\d+>;tag=/m);
    expect(mtls.stack.simulator.controls.stats().searchByNumber).toEqual({ '+442079460002': 1 });
    const line = requests().findLast((l) => l.fields.route === '/v2/contacts/cnam');
    expect([line?.fields.status, line?.fields.clientId]).toEqual([200, 'pbx']);
  });

  it('leaves the From header alone when its certificate names no client: the gateway refuses it with a 401', async () => {
    const kamailio = await kamailioWith('stranger');
    const before = requests().length;
    const invite = await kamailio.callFrom('+442079460003');
    expect(invite).toMatch(/^From: <sip:\+442079460003@127\.0\.0\.1:\d+>;tag=/m);
    const answered = requests().slice(before);
    expect(answered.map((l) => [l.fields.route, l.fields.status, l.fields.clientId])).toEqual([
      ['/v2/contacts/cnam', 401, undefined],
    ]);
    const refused = mtls.stack.logs.filter((l) => l.fields.event === 'client_certificate_refused');
    expect(refused.map((l) => [l.fields.reason, l.fields.certSha256])).toEqual([
      ['unmatched', mtls.certs.stranger.sha256],
    ]);
    expect(kamailio.log()).toMatch(/the gateway refused the CNAM credentials \(401\)/);
    expect(mtls.stack.simulator.controls.stats().searchByNumber['+442079460003']).toBeUndefined();
    // What Kamailio was answered: the CNAM route's fallback text (empty), said by its status and CNAM-Result.
    const stranger = mtls.certs.stranger;
    const tls = ['--cacert', pki.path('ca.pem'), '--cert', stranger.cert, '--key', stranger.key];
    const answer = await curl(`${mtls.base}/v2/contacts/cnam?what=%2B442079460003`, ['-i', ...tls]);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatch(/^cnam-result: unauthorized\r$/m);
    expect(answer.body).toMatch(/^content-type: text\/plain; charset=utf-8\r$/m);
  });
});
