// HEAD answers say the length their GET's body has, over a real socket on Node's server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawExchange } from '../helpers/raw-http.js';
import { startStack, type Stack } from '../helpers/stack.js';

describe('HEAD', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir' } });
    token = await stack.login();
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each(['/healthz', '/openapi.json', '/console', '/v2/contacts/search?what=%2B442079460001', '/no/such/route'])(
    'carries the Content-Length of the GET of %s, and no body',
    async (target) => {
      const lines = (method: string) => [`${method} ${target} HTTP/1.1`, 'Host: x', `Authorization: Bearer ${token}`];
      const get = await rawExchange(stack.gateway.url, lines('GET'));
      const head = await rawExchange(stack.gateway.url, lines('HEAD'), '', true);
      expect(head.status).toBe(get.status);
      expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
      expect(head.body).toBe('');
    },
  );
});
