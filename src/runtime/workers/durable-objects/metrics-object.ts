// The Durable Object behind the Worker's GET /metrics: one named instance for the deployment. Isolates push their
// deltas here; the totals are written to storage at most every WRITE_EVERY_MS (an alarm), and always before a
// scrape reads them, so a scrape shows only what storage holds and no counter goes down after a restart.
import { DurableObject } from 'cloudflare:workers';
import type { DurableObjectState, MetricsObjectRpc } from '../bindings.js';
import type { MetricsBatch, PushAnswer } from '../isolate-metrics.js';
import { createMetricsTotals, type MetricsTotals, type StoredTotals } from './metrics-totals.js';

/** The longest time pushed counts stay in memory only. */
const WRITE_EVERY_MS = 2_000;
const STORAGE_KEY = 'totals';

// A class because the Workers runtime instantiates Durable Objects from an exported class.
export class MetricsObject extends DurableObject implements MetricsObjectRpc {
  private totals: MetricsTotals = createMetricsTotals();
  private dirty = false;
  private readonly state: DurableObjectState;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.state = ctx;
    void ctx.blockConcurrencyWhile(async () => {
      this.totals = createMetricsTotals(await ctx.storage.get<StoredTotals>(STORAGE_KEY));
    });
  }

  async push(batch: MetricsBatch): Promise<PushAnswer> {
    const { seq, applied } = this.totals.apply(batch, Date.now());
    if (applied && !this.dirty) {
      this.dirty = true;
      if ((await this.state.storage.getAlarm()) === null)
        await this.state.storage.setAlarm(Date.now() + WRITE_EVERY_MS);
    }
    return { seq };
  }

  async render(): Promise<string> {
    await this.write();
    return this.totals.render(Date.now());
  }

  alarm(): Promise<void> {
    return this.write();
  }

  private async write(): Promise<void> {
    if (!this.dirty) return;
    this.dirty = false;
    await this.state.storage.put(STORAGE_KEY, this.totals.toStored());
  }
}
