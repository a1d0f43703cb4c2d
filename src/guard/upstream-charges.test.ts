// Daily quotas and the budget on a fake clock: reserved before the call (a burst cannot overshoot), refunded
// when it fails, and counted afresh from the next UTC midnight.
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../base/errors.js';
import { createUpstreamCharges, QuotaExhaustedError } from './upstream-charges.js';
import { noopTelemetry, type QuotaScope } from '../observability/telemetry.js';
import { createMemoryCounterStore } from '../shared-state/memory/memory-counter-store.js';
import { rejection } from '../../test/helpers/recorders.js';

function setup(options: { quota?: number; quotas?: Record<string, number>; budget?: number; at?: string } = {}) {
  const time = { now: Date.parse(options.at ?? '2026-03-01T23:59:58Z') };
  const clock = () => time.now;
  const rejected: [string, QuotaScope][] = [];
  const charges = createUpstreamCharges({
    store: createMemoryCounterStore({ clock }),
    clock,
    telemetry: { ...noopTelemetry, quotaRejected: (client, scope) => void rejected.push([client, scope]) },
    defaultQuota: options.quota,
    quotas: new Map(Object.entries(options.quotas ?? {})),
    budget: options.budget,
    isRegistered: (client) => client === 'crm' || client === 'pbx',
  });
  return { time, charges, rejected };
}

describe('upstream charges', () => {
  it('refuses the call past the quota with 429 quota-exhausted and Retry-After until the next UTC midnight', async () => {
    const { charges, rejected } = setup({ quota: 2, at: '2026-03-01T23:59:58.500Z' });
    await charges.reserve('crm');
    await charges.reserve('crm');
    const err = await rejection(charges.reserve('crm'));
    expect(err).toBeInstanceOf(QuotaExhaustedError);
    expect(err.code).toBe('quota_exhausted');
    expect(err.status).toBe(429);
    expect(err.headers['retry-after']).toBe('2');
    expect(rejected).toEqual([['crm', 'quota']]);
    // Another client has its own quota.
    await charges.reserve('pbx');
    expect(await charges.usage('crm')).toEqual({ used: 2, limit: 2 });
  });

  it('starts counting afresh at the UTC day boundary', async () => {
    const { time, charges } = setup({ quota: 1, at: '2026-03-01T23:59:59.900Z' });
    await charges.reserve('crm');
    await rejection(charges.reserve('crm'));
    time.now = Date.parse('2026-03-02T00:00:00.000Z');
    expect(await charges.usage('crm')).toEqual({ used: 0, limit: 1 });
    await charges.reserve('crm');
    expect((await rejection(charges.reserve('crm'))).headers['retry-after']).toBe('86400');
  });

  it('does not charge a refunded call, and refunds once however often asked', async () => {
    const { charges } = setup({ quota: 1, budget: 5 });
    const r = await charges.reserve('crm');
    await r.refund();
    await r.refund();
    expect(await charges.usage('crm')).toEqual({ used: 0, limit: 1 });
    expect(await charges.budget()).toEqual({ used: 0, limit: 5 });
    await charges.reserve('crm');
  });

  it('lets a concurrent burst take exactly the quota, never more', async () => {
    const { charges } = setup({ quota: 5 });
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => charges.reserve('crm')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(await charges.usage('crm')).toEqual({ used: 5, limit: 5 });
  });

  it('holds the budget for all callers together, the console included, and gives the quota back when the budget refuses', async () => {
    const { charges, rejected } = setup({ budget: 3, quota: 10 });
    await charges.reserve('crm');
    await charges.reserve('console');
    await charges.reserve('pbx');
    const err = await rejection(charges.reserve('crm'));
    expect(err.code).toBe('budget_exhausted');
    expect(err.status).toBe(503);
    expect(Number(err.headers['retry-after'])).toBeGreaterThan(0);
    expect(rejected).toEqual([['crm', 'budget']]);
    expect(await charges.usage('crm')).toEqual({ used: 1, limit: 10 });
    expect(await charges.budget()).toEqual({ used: 3, limit: 3 });
  });

  it('takes per-client overrides before the default; the console has a quota only when listed', async () => {
    const { charges } = setup({ quota: 100, quotas: { pbx: 1, console: 2 } });
    expect(charges.quotaOf('crm')).toBe(100);
    expect(charges.quotaOf('pbx')).toBe(1);
    expect(charges.quotaOf('console')).toBe(2);
    expect(setup({ quota: 100 }).charges.quotaOf('console')).toBeUndefined();
    expect(setup({ quota: 100 }).charges.quotaOf('someone-else')).toBeUndefined();
  });

  it('counts calls without a quota too, for the usage figures', async () => {
    const { charges } = setup();
    await charges.reserve('crm');
    await charges.reserve('crm');
    expect(await charges.usage('crm')).toEqual({ used: 2, limit: null });
    expect(await charges.budget()).toEqual({ used: 2, limit: null });
  });

  it('answers 503 when the store refuses (LIMITS_ON_STORE_ERROR=closed)', async () => {
    const clock = () => 0;
    const failing = { ...createMemoryCounterStore({ clock }), consume: () => Promise.reject(new Error('down')) };
    const charges = createUpstreamCharges({
      store: failing,
      clock,
      telemetry: noopTelemetry,
      defaultQuota: 1,
      quotas: new Map(),
      budget: undefined,
      isRegistered: () => true,
    });
    const err = await rejection(charges.reserve('crm'));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.code).toBe('unavailable');
    expect(err.headers['retry-after']).toBe('10');
  });
});
