// The console's traversal guard in the Worker build as workerd itself serves it (`workerd serve`, no wrangler proxy in
// front): the bundle `wrangler deploy --dry-run` makes, run with text bindings, asked over raw sockets. workerd keeps
// a percent-encoded dot segment in request.url, so the Worker sees the target as sent and refuses it; a literal dot
// segment is resolved by workerd before any Worker code runs (docs/security.md says what that means for a proxy).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../../../helpers/raw-http.js';
import { wranglerPresent } from '../../../helpers/wrangler-dev.js';
import { startWorkerdServe, type WorkerdServe } from '../../../helpers/workerd-serve.mjs';

const BINDINGS: Record<string, string> = {
  // Nothing listens on port 9: the token endpoint is unreachable, which these requests never need.
  UPSTREAM_AUTH_URL: 'http://127.0.0.1:9',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:9',
  UPSTREAM_CLIENT_ID: 'workerd-serve-gw',
  UPSTREAM_CLIENT_SECRET: 'workerd-serve-upstream-secret',
  GATEWAY_TOKEN_SECRET: 'workerd-serve-signing-key-0123456789abcdef',
  PUBLIC_BASE_URL: 'https://callerid.example.com',
  GATEWAY_CLIENTS: 'crm:caf08aef5775ac931b2b5091f345430474ee3422196097fe1312702c3068109e',
  DEFAULT_REGION: 'GB',
  CONSOLE_PROVIDER: 'swissdir',
  LOG_LEVEL: 'silent',
};

describe.skipIf(!wranglerPresent())('Worker build under workerd serve: the console traversal guard', () => {
  let workerd: WorkerdServe | undefined;
  let base: string;

  beforeAll(async () => {
    workerd = await startWorkerdServe(BINDINGS);
    base = workerd.url;
  }, 150_000);

  afterAll(async () => {
    await workerd?.close();
  });

  it.each(['/console/%2E%2E/healthz', '/console/%2e%2e/readyz', '/console/..%2fhealthz', '/console%2f..%2fhealthz'])(
    'refuses GET %s with 404 problem+json: the encoded traversal never reaches the route behind it',
    async (target) => {
      const res = await rawRequest(base, `GET ${target} HTTP/1.1\r\nHost: x`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.body).not.toContain('"status":"ok"');
    },
  );

  it('receives a literal dot segment already resolved by workerd: /console/./../healthz arrives as /healthz', async () => {
    const traversal = await rawRequest(base, 'GET /console/./../healthz HTTP/1.1\r\nHost: x');
    const direct = await rawRequest(base, 'GET /healthz HTTP/1.1\r\nHost: x');
    expect(direct.status).toBe(200);
    expect(traversal.status).toBe(direct.status);
    expect(traversal.body).toBe(direct.body);
  });
});
