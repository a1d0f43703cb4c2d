// Access tokens of a real identity provider in workerd: oidc-provider runs in Node beside the tests (the global
// setup; workerd cannot host it) and the Worker reaches its discovery document and JWK set over loopback, as the
// simulator. A mapped app's search is 200 and counted under its client; an unmapped app gets 401 invalid_token. The
// isolates of one data centre share the provider's documents through the Cache API: two isolates cost the provider one
// discovery and one JWK set fetch, and a key rotated in 30 s later reaches it with one more fetch for both.
import { waitOnExecutionContext } from 'cloudflare:test';
import { inject, describe, expect, it } from 'vitest';
import { fetchIdpToken } from '../../../helpers/idp-token.mjs';
import { isolate, METRICS_TOKEN, simulatorUrl } from './control.js';
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

/** How many times the provider was asked its JWK set and its discovery document since it started. */
async function idpAsked(): Promise<{ jwks: number; discovery: number }> {
  const paths = (await (await fetch(`${simulatorUrl()}/__control/idp/requests`)).json()) as string[];
  return {
    jwks: paths.filter((p) => p.startsWith('/jwks')).length,
    discovery: paths.filter((p) => p.startsWith('/.well-known/')).length,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    const asked = await idpAsked();
    const token = await idpToken(CRM_APP!);
    for (const worker of isolates) {
      for (let i = 0; i < 3; i++) expect((await worker.search('+442079460001', token)).status).toBe(200);
    }
    // The isolates push their counts in the background: read until the six arrive (or two seconds pass).
    let text = await isolates[0]!.scrape();
    for (let i = 0; i < 20 && searchesOf(text, WORKERD_CLIENT.id) - before < 6; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await isolates[0]!.scrape();
    }
    expect(searchesOf(text, WORKERD_CLIENT.id) - before).toBe(6);
    // The second isolate took the first one's copies from the Cache API: the provider was asked each document once.
    expect(await idpAsked()).toEqual({ jwks: asked.jwks + 1, discovery: asked.discovery + 1 });
    const fetched = text.match(/^callerid_gateway_idp_fetches_total\{issuer="0",document="jwks",outcome="ok"\} (\d+)/m);
    expect(Number(fetched?.[1])).toBe(1);

    const { res, ctx } = await isolates[0]!.answer('+442079460001', await idpToken(STRAY_APP!));
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(await res.text()).not.toContain('stray-app');
  });

  it('reaches the provider once for a key it rotated in, whichever isolate meets it first', async () => {
    const settings = { GATEWAY_CLIENTS: '', GATEWAY_ADMIN_CLIENTS: '', GATEWAY_CLIENTS_JSON: await clientsJson() };
    const [first, second] = [await isolate(settings), await isolate(settings)];
    const before = await idpToken(CRM_APP!);
    for (const worker of [first!, second!]) expect((await worker.search('+442079460001', before)).status).toBe(200);
    await fetch(`${simulatorUrl()}/__control/idp/rotate?kid=k2`, { method: 'POST' });
    const rotated = await idpToken(CRM_APP!);
    // Each isolate asks again at most once per 30 s, and the data centre's copy serves a key id it lacks for 30 s.
    await sleep(30_500);
    const asked = await idpAsked();
    for (const worker of [first!, second!]) expect((await worker.search('+442079460001', rotated)).status).toBe(200);
    expect(await idpAsked()).toEqual({ jwks: asked.jwks + 1, discovery: asked.discovery });
    for (const worker of [first!, second!]) expect((await worker.search('+442079460001', before)).status).toBe(200);
  }, 60_000);
});
