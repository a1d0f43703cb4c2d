// Access tokens of a real identity provider in workerd: oidc-provider runs in Node beside the tests (the global
// setup; workerd cannot host it) and the Worker reaches its discovery document and JWK set over loopback, as the
// simulator. A mapped app's search is 200 and counted under its client, each isolate fetching the keys once; an
// unmapped app gets 401 invalid_token.
import { waitOnExecutionContext } from 'cloudflare:test';
import { inject, describe, expect, it } from 'vitest';
import { fetchIdpToken } from '../../../helpers/idp-token.mjs';
import { isolate, METRICS_TOKEN } from './control.js';
import { WORKERD_CLIENT, WORKERD_IDP } from './workerd-env.js';

const [CRM_APP, STRAY_APP] = WORKERD_IDP.apps;

const idpToken = (app: { id: string; secret: string }) => fetchIdpToken(inject('idpIssuer'), WORKERD_IDP.audience, app);

const clientsJson = async () =>
  JSON.stringify({
    issuers: [{ issuer: inject('idpIssuer'), audience: WORKERD_IDP.audience, algorithms: ['ES256'] }],
    clients: [
      {
        id: WORKERD_CLIENT.id,
        admin: true,
        secrets: [{ hash: 'sha256:caf08aef5775ac931b2b5091f345430474ee3422196097fe1312702c3068109e' }],
        identities: [{ issuer: inject('idpIssuer'), subject: CRM_APP!.id }],
      },
    ],
  });

/** The searches counted under `client`, whatever their result, in a scrape's text. */
const searchesOf = (text: string, client: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`callerid_gateway_client_searches_total{client="${client}"`))
    .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);

describe('access tokens of a trusted identity provider in workerd', () => {
  it('answers a mapped app 200 under its client on two isolates, and an unmapped one 401', async () => {
    const settings = {
      GATEWAY_CLIENTS: '',
      GATEWAY_ADMIN_CLIENTS: '',
      GATEWAY_CLIENTS_JSON: await clientsJson(),
      METRICS_TOKEN,
    };
    const isolates = [await isolate(settings), await isolate(settings)];
    const before = searchesOf(await isolates[0]!.scrape(), WORKERD_CLIENT.id);
    const token = await idpToken(CRM_APP!);
    for (const worker of isolates) {
      for (let i = 0; i < 3; i++) expect((await worker.search('+442079460001', token)).status).toBe(200);
    }
    const text = await isolates[0]!.scrape();
    expect(searchesOf(text, WORKERD_CLIENT.id) - before).toBe(6);
    const fetched = text.match(/^callerid_gateway_idp_fetches_total\{issuer="0",document="jwks",outcome="ok"\} (\d+)/m);
    expect(Number(fetched?.[1])).toBe(2);

    const { res, ctx } = await isolates[0]!.answer('+442079460001', await idpToken(STRAY_APP!));
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await res.text()).not.toContain('stray-app');
  });
});
