// Discovery that cannot be poisoned (RFC 8414 metadata over a real socket): with PUBLIC_BASE_URL the issuer is that,
// whatever Host, absolute-form target or X-Forwarded-* a request sends; without it (development only) the issuer
// is the request's origin, X-Forwarded-Proto/-Host believed only from trusted hops, and no cache may keep the
// answer; NODE_ENV=production without PUBLIC_BASE_URL is refused at start with one line naming it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.js';
import { startNodeGateway } from '../../src/runtime/node/gateway.js';
import { rawRequest } from '../helpers/raw-http.js';
import { captureLogger, startStack, stackEnv, type Stack } from '../helpers/stack.js';

const METADATA = '/.well-known/oauth-authorization-server';
const metadataOf = (body: string) => JSON.parse(body) as { issuer: string; token_endpoint: string };

describe('discovery with PUBLIC_BASE_URL', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { PUBLIC_BASE_URL: 'https://callerid.example.com', TRUST_PROXY_HOPS: '1' } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers the configured issuer whatever Host, absolute-form target or X-Forwarded-* says, cacheable', async () => {
    for (const head of [
      `GET ${METADATA} HTTP/1.1\r\nHost: attacker.example`,
      `GET http://attacker.example${METADATA} HTTP/1.1\r\nHost: attacker.example`,
      `GET ${METADATA} HTTP/1.1\r\nHost: a\r\nX-Forwarded-Host: attacker.example\r\nX-Forwarded-Proto: http`,
      `GET ${METADATA} HTTP/1.0`,
    ]) {
      const res = await rawRequest(stack.gateway.url, head);
      expect(res.status, head).toBe(200);
      expect(metadataOf(res.body)).toMatchObject({
        issuer: 'https://callerid.example.com',
        token_endpoint: 'https://callerid.example.com/oauth2/token',
      });
      expect(res.headers['cache-control']).toBe('public, max-age=3600');
    }
  });
});

describe('discovery without PUBLIC_BASE_URL (development)', () => {
  let direct: Stack;
  let proxied: Stack;
  beforeAll(async () => {
    [direct, proxied] = await Promise.all([startStack(), startStack({ env: { TRUST_PROXY_HOPS: '2' } })]);
  });
  afterAll(async () => {
    await Promise.all([direct?.close(), proxied?.close()]);
  });

  it('answers the origin asked with Cache-Control: no-store, ignoring X-Forwarded-* from an untrusted peer', async () => {
    const res = await rawRequest(
      direct.gateway.url,
      `GET ${METADATA} HTTP/1.1\r\nHost: gw.example:8080\r\nX-Forwarded-Host: attacker.example\r\nX-Forwarded-Proto: https`,
    );
    expect(res.status).toBe(200);
    expect(metadataOf(res.body).issuer).toBe('http://gw.example:8080');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('takes the scheme and host the outermost trusted proxy saw, never a value the client wrote left of it', async () => {
    const ask = async (forwarded: string) =>
      metadataOf(
        (await rawRequest(proxied.gateway.url, `GET ${METADATA} HTTP/1.1\r\nHost: internal:8080\r\n${forwarded}`)).body,
      ).issuer;
    // Two trusted hops, each appending: the client's own entry (leftmost of three) is not believed.
    expect(
      await ask(
        'X-Forwarded-Proto: http, https, http\r\nX-Forwarded-Host: attacker.example, callerid.example.com, edge',
      ),
    ).toBe('https://callerid.example.com');
    // A forwarded host that is no host (a path, credentials) leaves the request's own.
    expect(await ask('X-Forwarded-Proto: https\r\nX-Forwarded-Host: a.example/evil')).toBe('https://internal:8080');
    expect(await ask('X-Forwarded-Proto: gopher\r\nX-Forwarded-Host: b.example')).toBe('http://b.example');
  });
});

describe('NODE_ENV=production', () => {
  it('refuses to start without PUBLIC_BASE_URL, with one line naming it', async () => {
    const env = await stackEnv('http://127.0.0.1:9');
    const logger = captureLogger();
    const started = startNodeGateway({ ...env, NODE_ENV: 'production' }, { logger });
    const err = await started.then(
      async (gateway) => {
        await gateway.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message.split('\n')).toHaveLength(1);
    expect(message).toMatch(/PUBLIC_BASE_URL: is required when NODE_ENV=production/);
  });
});
