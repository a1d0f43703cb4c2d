import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../base/errors.js';
import { healthRoutes } from './health-route.js';
import type { TokenStatus } from '../../upstream/token-manager.js';

const NOW = 1_700_000_000_000;

function routes(
  status: Partial<TokenStatus>,
  getToken: () => Promise<string> = () => Promise.resolve('t'),
  revocationsLoaded = true,
) {
  const upstreamTokens = {
    status: vi.fn((): TokenStatus => ({
      hasToken: false,
      expiresAt: null,
      lastError: null,
      consecutiveFailures: 0,
      retryAt: null,
      ...status,
    })),
    getToken: vi.fn(getToken),
  };
  return {
    app: healthRoutes({ upstreamTokens, clock: () => NOW, revocationsLoaded: () => revocationsLoaded }),
    upstreamTokens,
  };
}

describe('health routes', () => {
  it('answers /healthz 200 whatever the upstream does', async () => {
    const { app } = routes({ retryAt: NOW + 5000, lastError: 'token endpoint answered 500' });
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('is ready at once while a token is held, without asking for one', async () => {
    const { app, upstreamTokens } = routes({ hasToken: true });
    expect((await app.request('/readyz')).status).toBe(200);
    expect(upstreamTokens.getToken).not.toHaveBeenCalled();
  });

  it('obtains a token when none is held, and is ready when that works', async () => {
    const { app, upstreamTokens } = routes({});
    expect((await app.request('/readyz')).status).toBe(200);
    expect(upstreamTokens.getToken).toHaveBeenCalledTimes(1);
  });

  it('answers 503 with the reason and Retry-After during back-off, without asking the token endpoint', async () => {
    const { app, upstreamTokens } = routes({
      retryAt: NOW + 2500,
      lastError: 'token endpoint answered 500',
      consecutiveFailures: 2,
    });
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('retry-after')).toBe('3');
    expect(((await res.json()) as { detail: string }).detail).toMatch(
      /no upstream token \(token endpoint answered 500\)/,
    );
    expect(upstreamTokens.getToken).not.toHaveBeenCalled();
  });

  it('answers 503 with the reason when obtaining a token fails', async () => {
    let failed = false;
    const upstreamTokens = {
      status: (): TokenStatus => ({
        hasToken: false,
        expiresAt: null,
        lastError: failed ? 'token endpoint unreachable' : null,
        consecutiveFailures: failed ? 1 : 0,
        retryAt: failed ? NOW + 800 : null,
      }),
      getToken: async () => {
        failed = true;
        throw new GatewayError('token_unavailable', 'the upstream token could not be obtained');
      },
    };
    const res = await healthRoutes({ upstreamTokens, clock: () => NOW, revocationsLoaded: () => true }).request(
      '/readyz',
    );
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toBe(
      'not ready: no upstream token (token endpoint unreachable)',
    );
  });

  it('answers 503 with the reason while the revoked tokens are not yet read, a token held or not', async () => {
    const { app, upstreamTokens } = routes({ hasToken: true }, undefined, false);
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as { detail: string }).detail).toBe(
      'not ready: revoked tokens not yet read from the shared store',
    );
    expect(upstreamTokens.getToken).not.toHaveBeenCalled();
  });
});
