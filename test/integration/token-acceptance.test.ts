// A gateway token is accepted in exactly one spelling, and only while its client is registered: other
// spellings of the signature and tokens of removed clients get 401, on the app and on the Node door.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/auth/client-registry.js';
import { startNodeGateway, type RunningGateway } from '../../src/runtime/node/gateway.js';
import { CLIENTS, loginAt, startStack, type Stack } from '../helpers/stack.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same bytes, spelled otherwise: the signature's unused low bits set, or `=` padding appended. */
function otherSpellings(token: string): string[] {
  const last = ALPHABET.indexOf(token.at(-1)!);
  const flipped = [1, 2, 3].map((bits) => token.slice(0, -1) + ALPHABET[last ^ bits]);
  return [...flipped, `${token}=`, `${token}==`, `${token.replace('.', '=.')}`];
}

async function searchWith(base: string, token: string): Promise<Response> {
  return fetch(`${base}/v2/contacts/search?what=${encodeURIComponent('020 7946 0001')}`, {
    headers: { authorization: `Bearer ${token}` },
  });
}

describe('gateway token acceptance', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack();
    token = await stack.login('crm');
    // Verified once and the number cached: the Node door could now answer this token.
    expect((await searchWith(stack.gateway.url, token)).status).toBe(200);
    expect((await searchWith(stack.gateway.url, token)).headers.get('cache-status')).toMatch(/; hit;/);
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers 401 for every non-canonical spelling of a valid token, also once the token is on the hit path', async () => {
    expect(ALPHABET.indexOf(token.at(-1)!) & 3).toBe(0);
    for (const spelling of otherSpellings(token)) {
      for (let i = 0; i < 2; i++) {
        const res = await searchWith(stack.gateway.url, spelling);
        expect(res.status, spelling.slice(-6)).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="callerid-gateway", error="invalid_token"/);
      }
    }
    expect((await searchWith(stack.gateway.url, token)).status).toBe(200);
  });

  describe('a client removed from GATEWAY_CLIENTS', () => {
    let restarted: RunningGateway;

    beforeAll(async () => {
      // The same deployment restarted without crm: same signing key, same upstream.
      const others = await Promise.all(
        ['pbx', 'ops'].map(async (id) => `${id}:${await sha256Hex(CLIENTS[id as 'pbx' | 'ops'])}`),
      );
      restarted = await startNodeGateway({
        PORT: '0',
        HOST: '127.0.0.1',
        UPSTREAM_AUTH_URL: stack.simulator.url,
        UPSTREAM_BASE_URL: stack.simulator.url,
        UPSTREAM_CLIENT_ID: 'gateway-under-test',
        UPSTREAM_CLIENT_SECRET: 'upstream-secret-xyz',
        GATEWAY_TOKEN_SECRET: 'test-signing-key-of-at-least-32-bytes!',
        GATEWAY_CLIENTS: others.join(','),
        DEFAULT_REGION: 'GB',
        LOG_LEVEL: 'silent',
        METRICS_PORT: '0',
      });
      const pbx = await loginAt(restarted.url, 'pbx', CLIENTS.pbx);
      // The number is cached there too, so a hit path that skipped the registry would answer.
      expect((await searchWith(restarted.url, pbx)).status).toBe(200);
      expect((await searchWith(restarted.url, pbx)).headers.get('cache-status')).toMatch(/; hit;/);
    });
    afterAll(async () => {
      await restarted.close();
    });

    it('loses access at once: its still unexpired token gets 401 on every request', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await searchWith(restarted.url, token);
        expect(res.status).toBe(401);
      }
    });
  });
});
