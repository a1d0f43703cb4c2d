// A real Kamailio (config/kamailio/cnam-lookup.cfg) asks the gateway's CNAM route with HTTP Basic credentials in
// the URL (http_client_query) and puts the name into the From display name of an INVITE that sipp sends through
// it; a second sipp, the callee, records what it received. Needs the Debian packages kamailio,
// kamailio-utils-modules (http_client) and sip-tester (sipp).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kamailioReady, startKamailio, type RunningKamailio } from '../helpers/kamailio.js';
import { CLIENTS, startStack, type Stack } from '../helpers/stack.js';

describe.skipIf(!kamailioReady())('Kamailio sets the caller name from the gateway', () => {
  let stack: Stack;
  let kamailio: RunningKamailio;

  beforeAll(async () => {
    stack = await startStack();
    const url = new URL('/v2/contacts/cnam', stack.gateway.url);
    url.username = 'pbx';
    url.password = CLIENTS.pbx;
    kamailio = await startKamailio({ CNAM_URL: url.href });
  });

  afterAll(async () => {
    await kamailio?.stop();
    await stack?.close();
  });

  it('puts the folded caller name into the From display name of the INVITE the callee receives', async () => {
    const invite = await kamailio.callFrom('+442079460002');
    expect(invite).toMatch(/^From: "Muller Jonas" <sip:\+442079460002@127\.0\.0\.1:\d+>;tag=/m);
    expect(stack.simulator.controls.stats().searchByNumber).toEqual({ '+442079460002': 1 });
  });

  it('leaves the From header alone for an unlisted caller (the fallback is empty)', async () => {
    const invite = await kamailio.callFrom('+442079460999');
    expect(invite).toMatch(/^From: <sip:\+442079460999@127\.0\.0\.1:\d+>;tag=/m);
  });
});
