// Request targets an attacker shapes by hand, sent as written over raw TCP: a `what` repeated under another
// spelling of its name, and absolute-form targets that try to climb out of /console.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';
import { rawRequest } from '../helpers/raw-http.js';

const A = '%2B442079460001';
const B = '%2B442079460002';
const SMUGGLED = [
  `what=${A}&wh%61t=${B}`,
  `what=${A}&%77hat=${B}`,
  `what=${A}&what`,
  `what=${A}&WH%41T=${B}&what=${B}`,
  `%77%68%61%74=${A}&what=${B}`,
  `what=${A}&wha%74`,
  `what=${A}&WHAT=${B}`,
];

describe('parameter smuggling: `what` repeated under any spelling of its name', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir' } });
    token = await stack.login();
    // A fresh entry for A, so the Node door would be able to answer it.
    await (await stack.search('+442079460001', token)).text();
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each(SMUGGLED)('answers 400 on the API, also for a cached number on the hit path: %s', async (query) => {
    const res = await rawRequest(
      stack.gateway.url,
      `GET /v2/contacts/search?${query} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}`,
    );
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body)).toMatchObject({
      status: 400,
      detail: expect.stringContaining('"what" must be given once'),
    });
  });

  it.each(SMUGGLED)('answers 400 on the console: %s', async (query) => {
    const res = await rawRequest(
      stack.gateway.url,
      `GET /console/v2/contacts/search?${query} HTTP/1.1\r\nHost: x\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ status: 400 });
  });

  it('still answers a single `what` and ignores other parameters', async () => {
    const res = await rawRequest(
      stack.gateway.url,
      `GET /v2/contacts/search?what=${A}&whatever=1&x=what HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}`,
    );
    expect(res.status).toBe(200);
  });
});

describe('absolute-form request targets', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { CONSOLE_PROVIDER: 'swissdir' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it.each([
    'http://x/console/../metrics',
    'http://x/console/%2e%2e/healthz',
    'http://x/console/%2E%2E/metrics',
    'HTTP://x:80/console/./../metrics',
    'http://x/console%2f..%2fmetrics',
    'http://x/console/../v2/contacts/search?what=%2B442079460001',
  ])('answers 404 or 400 for GET %s, as for the origin-form target', async (target) => {
    const res = await rawRequest(stack.gateway.url, `GET ${target} HTTP/1.1\r\nHost: x`);
    expect([400, 404]).toContain(res.status);
    expect(res.body).not.toContain('callerid_gateway_');
    expect(res.body).not.toContain('"status":"ok"');
  });

  it('answers origin-form and absolute-form targets alike for the traversal', async () => {
    const origin = await rawRequest(stack.gateway.url, 'GET /console/../metrics HTTP/1.1\r\nHost: x');
    const absolute = await rawRequest(stack.gateway.url, 'GET http://x/console/../metrics HTTP/1.1\r\nHost: x');
    expect(absolute.status).toBe(origin.status);
  });

  it('still serves plain absolute-form targets outside the console', async () => {
    const res = await rawRequest(stack.gateway.url, 'GET http://x/healthz HTTP/1.1\r\nHost: x');
    expect(res.status).toBe(200);
  });
});
