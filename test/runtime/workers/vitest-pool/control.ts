// Helpers for the tests inside workerd: the simulator's control API (it runs in Node on a loopback port), the
// spans the OTLP receiver beside it took, the Worker's bindings, and gateways built from them standing in for
// separate isolates.
import { env } from 'cloudflare:workers';
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { inject } from 'vitest';
import type { SimulatorFaults, SimulatorStats } from '../../../../src/simulator/simulator-app.js';
import { createWorkerGateway, type WorkerGateway } from '../../../../src/runtime/workers/main.js';
import type {
  CounterObjectRpc,
  MetricsObjectRpc,
  RevocationObjectRpc,
} from '../../../../src/runtime/workers/bindings.js';
import type { UpstreamTokenObjectRpc } from '../../../../src/runtime/workers/bindings.js';
import type { DurableObjectNamespace, ExecutionContext } from '../../../../src/runtime/workers/bindings.js';
import type { ReceivedSpan } from '../../../helpers/otlp-receiver.js';
import { WORKERD_CLIENT, WORKERD_UPSTREAM } from './workerd-env.js';

export const simulatorUrl = (): string => inject('simulatorUrl');

export const simulator = {
  async stats(): Promise<SimulatorStats> {
    return (await fetch(`${simulatorUrl()}/__control/stats`)).json() as Promise<SimulatorStats>;
  },
  /** Zero counts, no faults, every token it issued revoked. */
  async reset(): Promise<void> {
    await fetch(`${simulatorUrl()}/__control/reset`, { method: 'POST' });
  },
  async faults(faults: Partial<SimulatorFaults>): Promise<void> {
    await fetch(`${simulatorUrl()}/__control/faults`, {
      method: 'POST',
      body: JSON.stringify(faults),
      headers: { 'content-type': 'application/json' },
    });
  },
};

/** A span as the OTLP receiver decoded it, its nanosecond times as strings (JSON has no bigint). */
export type ExportedSpan = Omit<ReceivedSpan, 'startTimeUnixNano' | 'endTimeUnixNano'> & {
  startTimeUnixNano: string;
  endTimeUnixNano: string;
};

export const collector = {
  /** The spans of `traceId` each export request carried, in the order they arrived (requests without any left out). */
  async exports(traceId: string): Promise<ExportedSpan[][]> {
    return (await fetch(`${simulatorUrl()}/__control/exports?traceId=${traceId}`)).json() as Promise<ExportedSpan[][]>;
  },
  /** The User-Agent of each export request that carried a span of `traceId` (null: none sent). */
  async userAgents(traceId: string): Promise<(string | null)[]> {
    const url = `${simulatorUrl()}/__control/export-user-agents?traceId=${traceId}`;
    return (await fetch(url)).json() as Promise<(string | null)[]>;
  },
};

const isTracingSetting = (name: string) => name.startsWith('OTEL_');

/** The Worker's OTEL_* bindings (workerd-env.ts), which its Durable Objects read: pass them to isolate() to trace. */
export const tracingSettings = (): Record<string, unknown> =>
  Object.fromEntries(Object.entries(env).filter(([name]) => isTracingSetting(name)));

export const bindings = env;
export const tokenObjects = env['UPSTREAM_TOKEN'] as DurableObjectNamespace<UpstreamTokenObjectRpc>;
export const counterObjects = env['COUNTERS'] as DurableObjectNamespace<CounterObjectRpc>;
export const metricsObjects = env['METRICS'] as DurableObjectNamespace<MetricsObjectRpc>;
export const revocationObjects = env['REVOCATIONS'] as DurableObjectNamespace<RevocationObjectRpc>;
/** Counter objects that answer every call 3 s late (late-objects.js): pass as COUNTERS to meet a silent store. */
export const lateCounterObjects = env['LATE_COUNTERS'] as DurableObjectNamespace<CounterObjectRpc>;
export const UPSTREAM_CLIENT_ID = WORKERD_UPSTREAM.clientId;

/** One isolate's gateway: its own memory (LRU, token copy, metrics), the deployment's bindings. */
export interface Isolate {
  gateway: WorkerGateway;
  /** Serves a request the way the Worker's fetch handler does; `ctx` is returned to wait on its background work. */
  request(path: string, init?: RequestInit): Promise<{ res: Response; ctx: ExecutionContext }>;
  login(): Promise<string>;
  /** A search answered, its background work still running on `ctx`. */
  answer(what: string, token: string): Promise<{ res: Response; ctx: ExecutionContext }>;
  /** A search answered and its background work (metrics push, counts sent to the objects) finished. */
  search(what: string, token: string): Promise<Response>;
  /** GET /metrics with METRICS_TOKEN (the isolate must be built with it): the deployment's text. */
  scrape(): Promise<string>;
}

/** The METRICS_TOKEN an isolate needs for scrape(). */
export const METRICS_TOKEN = 'workerd-metrics-token';

/** An isolate's gateway; without OTEL_* settings in `extra` its tracing is off (see tracingSettings). */
export async function isolate(extra: Record<string, unknown> = {}): Promise<Isolate> {
  const untraced = Object.fromEntries(Object.entries(env).filter(([name]) => !isTracingSetting(name)));
  const gateway = await createWorkerGateway({ ...untraced, ...extra }, { host: 'callerid.test' });
  const request: Isolate['request'] = async (path, init) => {
    const ctx = createExecutionContext();
    const res = await gateway.fetch(new Request(`https://callerid.test${path}`, init), ctx);
    return { res, ctx };
  };
  const answer: Isolate['answer'] = (what, token) =>
    request(`/v2/contacts/search?what=${encodeURIComponent(what)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
  return {
    gateway,
    request,
    async login() {
      const { res } = await request('/token/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: WORKERD_CLIENT.id,
          client_secret: WORKERD_CLIENT.secret,
        }),
      });
      if (res.status !== 200) throw new Error(`login failed: ${res.status}`);
      return ((await res.json()) as { access_token: string }).access_token;
    },
    answer,
    async search(what, token) {
      const { res, ctx } = await answer(what, token);
      await waitOnExecutionContext(ctx);
      return res;
    },
    async scrape() {
      const { res, ctx } = await request('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      await waitOnExecutionContext(ctx);
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
      return res.text();
    },
  };
}
