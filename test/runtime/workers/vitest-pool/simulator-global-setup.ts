// Runs in Node before the workerd tests: the simulator on a loopback port (reachable from workerd like any
// upstream), plus a small control API the tests inside workerd use to read its counts and set its faults, and an
// OTLP/HTTP receiver (decoding with the opentelemetry-proto files) whose export requests that API hands back.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestProject } from 'vitest/node';
import { createSimulator } from '../../../../src/simulator/simulator-app.js';
import { signingKey, startIdp } from '../../../helpers/oidc-idp.mjs';
import { startOtlpReceiver } from '../../../helpers/otlp-receiver.js';
import { WORKERD_IDP, WORKERD_UPSTREAM } from './workerd-env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    simulatorUrl: string;
    /** The OTLP receiver's traces endpoint. */
    otlpUrl: string;
    /** A real identity provider (oidc-provider) issuing JWT access tokens to WORKERD_IDP's apps. */
    idpIssuer: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { app: simulator, controls } = createSimulator({
    clients: { [WORKERD_UPSTREAM.clientId]: WORKERD_UPSTREAM.clientSecret },
  });
  const app = new Hono();
  app.get('/__control/stats', (c) => c.json(controls.stats()));
  app.post('/__control/reset', (c) => {
    controls.resetStats();
    controls.revokeAllTokens();
    controls.setFaults({
      latencyMs: 0,
      tokenLatencyMs: 0,
      errorRate: 0,
      tokenErrorRate: 0,
      hangRate: 0,
      tokenLifetimeSeconds: 90_000,
      revokeTokensAfterMs: null,
      malformedToken: false,
      hugeBody: null,
      rateLimitRate: 0,
      rateLimitRetryAfter: null,
    });
    return c.json({ ok: true });
  });
  app.post('/__control/faults', async (c) => {
    controls.setFaults(await c.req.json());
    return c.json(controls.faults());
  });
  const receiver = await startOtlpReceiver();
  // Each export request's spans of one trace (their nanosecond times as strings: JSON has no bigint).
  app.get('/__control/exports', (c) => {
    const traceId = c.req.query('traceId');
    const exports = receiver.requests.map((r) =>
      r.spans
        .filter((s) => s.traceId === traceId)
        .map((s) => ({
          ...s,
          startTimeUnixNano: String(s.startTimeUnixNano),
          endTimeUnixNano: String(s.endTimeUnixNano),
        })),
    );
    return c.json(exports.filter((spans) => spans.length > 0));
  });
  // The User-Agent of each export request that carried a span of one trace.
  app.get('/__control/export-user-agents', (c) =>
    c.json(
      receiver.requests
        .filter((r) => r.spans.some((s) => s.traceId === c.req.query('traceId')))
        .map((r) => r.headers['user-agent'] ?? null),
    ),
  );
  const first = await signingKey('k1');
  const idp = await startIdp({ audience: WORKERD_IDP.audience, apps: WORKERD_IDP.apps, keys: [first] });
  // The paths the identity provider was asked (its token endpoint included), in order, since it started.
  app.get('/__control/idp/requests', (c) => c.json(idp.requests));
  // The provider signs with a key of the given id from now on and publishes it beside the first.
  app.post('/__control/idp/rotate', async (c) => {
    idp.rotate([await signingKey(c.req.query('kid') ?? 'k2'), first]);
    return c.json({ ok: true });
  });
  app.route('/', simulator);

  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
  });
  const { port } = server.address() as AddressInfo;
  project.provide('simulatorUrl', `http://127.0.0.1:${port}`);
  project.provide('otlpUrl', receiver.url);
  project.provide('idpIssuer', idp.issuer);
  return async () => {
    await idp.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await receiver.close();
  };
}
