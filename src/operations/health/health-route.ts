// GET /healthz (the process answers) and GET /readyz (it can serve searches: the deployment's revocations are read
// and an upstream token is held or can be obtained now), for container and orchestrator probes.
import { Hono } from 'hono';
import type { AppEnv } from '../../http/app-env.js';
import { healthDocs } from './health-docs.js';
import { problemResponse } from '../../base/errors.js';
import type { TokenManager } from '../../upstream/token-manager.js';

const NO_STORE = { 'cache-control': 'no-store' } as const;

export interface HealthOptions {
  upstreamTokens: Pick<TokenManager, 'getToken' | 'status'>;
  clock: () => number;
  /** Whether the deployment's revoked tokens are read (until then gateway tokens are held back: docs/security.md). */
  revocationsLoaded: () => boolean;
}

export function healthRoutes(options: HealthOptions): Hono<AppEnv> {
  const { upstreamTokens, clock, revocationsLoaded } = options;
  const app = new Hono<AppEnv>();

  app.get('/healthz', healthDocs.healthz, (c) => c.json({ status: 'ok' }, 200, NO_STORE));

  // The configuration was validated before this app existed, so readiness is about the revocations and the upstream
  // token.
  app.get('/readyz', healthDocs.readyz, async (c) => {
    const notReady = (reason: string, retryAt: number | null) => {
      const headers: Record<string, string> = { ...NO_STORE };
      if (retryAt !== null) headers['retry-after'] = String(Math.max(1, Math.ceil((retryAt - clock()) / 1000)));
      return problemResponse('unavailable', `not ready: ${reason}`, c.get('requestId'), headers);
    };
    // A replica that cannot check tokens against the denylist serves none of them: no traffic for it yet.
    if (!revocationsLoaded()) return notReady('revoked tokens not yet read from the shared store', clock() + 1000);
    const before = upstreamTokens.status();
    if (before.hasToken) return c.json({ status: 'ready' }, 200, NO_STORE);
    // While the token manager is backing off, say why without asking the token endpoint again.
    if (before.retryAt !== null) {
      return notReady(
        `no upstream token (${before.lastError ?? 'refresh failing'}); next attempt after back-off`,
        before.retryAt,
      );
    }
    try {
      // Single-flight inside the token manager: probes share the refresh that searches would start anyway.
      await upstreamTokens.getToken();
      return c.json({ status: 'ready' }, 200, NO_STORE);
    } catch {
      const after = upstreamTokens.status();
      return notReady(`no upstream token (${after.lastError ?? 'refresh failed'})`, after.retryAt);
    }
  });

  return app;
}
