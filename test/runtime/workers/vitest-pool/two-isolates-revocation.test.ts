// Two gateway instances built in one workerd from the same bindings, standing in for two isolates: a gateway token
// revoked through one (RFC 7009, with oauth4webapi's own revocation call) is refused by both, the other having
// searched with it before; an admin's revocation of a client's tokens reaches both. The REVOCATIONS Durable Object
// carries it.
import { createExecutionContext, reset, waitOnExecutionContext } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import * as clients from '../../../helpers/oauth-clients.js';
import { isolate, simulator, type Isolate } from './control.js';
import { WORKERD_CLIENT } from './workerd-env.js';

const NUMBER = '020 7946 0001';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How old an isolate's copy of the revocations may be before a request waits for the object's (its default). */
const FRESH_MS = 500;

/**
 * The status `via` answers `token` with, asked once, just over {@link FRESH_MS} after the revocation: its copy is
 * then older than that, so the request waits for the object's before it is answered, however loaded the machine.
 * A wall-clock bound on the time until the first 401 would count the machine's load too.
 */
async function statusAfterFreshness(via: Isolate, token: string): Promise<number> {
  await sleep(FRESH_MS + 20);
  return (await via.search(NUMBER, token)).status;
}

const targetOf = (via: Isolate): clients.OAuthTarget => ({
  base: 'https://callerid.test',
  fetch: async (url, init) => {
    const ctx = createExecutionContext();
    const res = await via.gateway.fetch(new Request(url, init as RequestInit), ctx);
    await waitOnExecutionContext(ctx);
    return res;
  },
});

describe('revocation across two isolates of one Worker deployment', () => {
  beforeEach(async () => {
    await reset();
    await simulator.reset();
  });

  it('refuses a token revoked through A on both, B having searched with it before, at its first request half a second later', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const token = await a.login();
    expect((await a.search(NUMBER, token)).status).toBe(200);
    expect((await b.search(NUMBER, token)).status).toBe(200);
    await clients.oauth4webapiRevoke(targetOf(a), WORKERD_CLIENT.id, WORKERD_CLIENT.secret, token);
    expect((await a.search(NUMBER, token)).status).toBe(401);
    expect(await statusAfterFreshness(b, token)).toBe(401);
    // A new isolate, started after the revocation, refuses it at its first request.
    expect((await (await isolate()).search(NUMBER, token)).status).toBe(401);
    expect((await b.search(NUMBER, await b.login())).status).toBe(200);
  });

  it('refuses every token of a client revoked by an admin through B on A, at its first request half a second later', async () => {
    const [a, b] = [await isolate(), await isolate()];
    const token = await a.login();
    expect((await a.search(NUMBER, token)).status).toBe(200);
    const { res } = await b.request('/admin/tokens/revoke-client', {
      method: 'POST',
      headers: { authorization: `Bearer ${await b.login()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: WORKERD_CLIENT.id }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ client_id: WORKERD_CLIENT.id, reach: 'deployment' });
    expect(await statusAfterFreshness(a, token)).toBe(401);
  });
});
