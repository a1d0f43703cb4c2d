// A known client's search (the items of a batch): a refusal by its rate is its own case, known at once, and the
// batch refuses whole by it. Through the services a gateway builds, in front of the simulator's app in process.
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../app/app.js';
import { parseConfig } from '../config/config.js';
import { noopTelemetry } from '../observability/telemetry.js';
import { silentLogger } from '../observability/logger.js';
import { createServices, type Services } from '../services/services.js';
import { createSimulator, type Simulator } from '../simulator/simulator-app.js';
import { createFetchHttp } from '../base/upstream-http.js';

/** Mid-minute, so that the client's per-minute window never turns during a test. */
const NOW = Date.UTC(2026, 10, 28, 12, 0, 30);
const input = (what: string) => ({ what, prefer: undefined, requestId: 'use-case-unit' });

describe("a known client's search", () => {
  let simulator: Simulator;
  let services: Services;

  beforeEach(async () => {
    simulator = createSimulator({ clients: { gw: 'upstream-secret' } });
    const env = {
      UPSTREAM_AUTH_URL: 'https://auth.example.test/',
      UPSTREAM_BASE_URL: 'https://api.example.test',
      UPSTREAM_CLIENT_ID: 'gw',
      UPSTREAM_CLIENT_SECRET: 'upstream-secret',
      GATEWAY_TOKEN_SECRET: 'x'.repeat(32),
      GATEWAY_CLIENTS: `crm:${'a'.repeat(64)}`,
      CLIENT_RATE_PER_MINUTE: '2',
    };
    const http = createFetchHttp((url, init) => Promise.resolve(simulator.app.fetch(new Request(url, init))));
    services = await createServices(parseConfig(env), {
      http,
      clock: () => NOW,
      logger: silentLogger,
      telemetry: noopTelemetry,
      peerAddress: () => '127.0.0.1',
    });
  });

  it('is refused by its rate as its own case, at once, with nothing looked up', async () => {
    const { search } = services;
    const first = search.byClient('crm', input('+44 20 7946 0001'));
    expect('outcome' in first && (await first.outcome)).toMatchObject({ caller: 'crm', lookup: { cache: 'miss' } });
    // A fresh hit: answered synchronously, as its outcome.
    expect(search.byClient('crm', input('+44 20 7946 0001'))).toMatchObject({ outcome: { fresh: true } });
    const over = search.byClient('crm', input('+44 20 7946 0002'));
    expect(over).not.toBeInstanceOf(Promise);
    expect(over).toEqual({ rateRefused: expect.objectContaining({ step: 'rate', caller: 'crm', lookup: undefined }) });
    expect(simulator.controls.stats().searchCalls).toBe(1);
  });

  it('makes a batch whose first search its rate refuses one 429, and nothing searched', async () => {
    const app = createApp(services);
    const token = (await services.gatewayTokens.issue('crm')).accessToken;
    const batch = (numbers: string[]) =>
      app.request('/v2/contacts/search/batch', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ numbers }),
      });
    // Three distinct numbers, two allowed: the third is refused as an item, the batch answered.
    const partly = await batch(['+44 20 7946 0001', '+44 20 7946 0002', '+44 20 7946 0003']);
    expect(partly.status).toBe(200);
    const items = ((await partly.json()) as { results: { status: number }[] }).results.map((r) => r.status);
    expect(items).toEqual([200, 200, 429]);
    const whole = await batch(['+44 20 7946 0001', '+44 20 7946 0004']);
    expect(whole.status).toBe(429);
    expect(whole.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(whole.headers.get('retry-after')).not.toBeNull();
    expect(simulator.controls.stats().searchCalls).toBe(2);
  });
});
