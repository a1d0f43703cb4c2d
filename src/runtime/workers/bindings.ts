// Structural types of the Workers bindings the gateway uses (Durable Objects, Analytics Engine, the request's
// execution context), narrowed to the members called, and the RPC surfaces of the gateway's own Durable Objects;
// only the Workers runtime files import them.
import type { Revocation } from '../../auth/revocations.js';
import type { UpstreamOutcome } from '../../observability/telemetry.js';
import type { TraceCarrier } from '../../observability/tracing/http-spans.js';
import type { CounterDecision, CounterState } from '../../shared-state/counter-store.js';
import type { ObtainedToken, SharedToken } from '../../shared-state/token-store.js';

export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException?(): void;
}

export interface DurableObjectStorage {
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  deleteAll(): Promise<void>;
  list<T>(options: { prefix?: string; start?: string; end?: string; limit?: number }): Promise<Map<string, T>>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

export interface DurableObjectState {
  readonly storage: DurableObjectStorage;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
  waitUntil(promise: Promise<unknown>): void;
}

/** Opaque: derived from a name, safe to keep across requests (unlike a stub, which belongs to one request). */
export interface DurableObjectId {
  toString(): string;
}

export interface DurableObjectNamespace<Rpc> {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): Rpc;
}

export interface AnalyticsEngineDataPoint {
  indexes?: string[];
  blobs?: (string | null)[];
  doubles?: number[];
}

export interface AnalyticsEngineDataset {
  writeDataPoint(point: AnalyticsEngineDataPoint): void;
}

/** What a refresh asks for (the port's options without the wait, which the isolate's timeout covers). */
export interface TokenWanted {
  newerThan: number | null;
  validForMs: number;
}

/** Crosses the RPC boundary as data: a thrown error would lose its outcome on the way to the isolate. */
export type TokenRefreshReply =
  | { ok: true; token: SharedToken }
  | { ok: false; outcome: UpstreamOutcome; message: string; status: number | null; retryAt: number | null };

/*
 * The RPC surfaces isolates call. A call made for a request ends with that request's trace context (`trace`:
 * `traceparent` and `tracestate`, empty when it has none), as an upstream request carries it in its header fields.
 * Only the token object records a span under it (its upstream login); the others take it and record nothing.
 */

/** The token object's (through token-store.ts). */
export interface UpstreamTokenObjectRpc {
  read(clientId: string, trace?: TraceCarrier): Promise<SharedToken | null>;
  refresh(clientId: string, wanted: TokenWanted, trace?: TraceCarrier): Promise<TokenRefreshReply>;
  dropIfCurrent(clientId: string, generation: number, trace?: TraceCarrier): Promise<boolean>;
  offer(clientId: string, token: ObtainedToken, trace?: TraceCarrier): Promise<SharedToken | null>;
}

/** A counter object's (through counter-store.ts). */
export interface CounterObjectRpc {
  consume(points: number, limit: number, windowMs: number, trace?: TraceCarrier): Promise<CounterDecision>;
  add(points: number, windowMs: number, trace?: TraceCarrier): Promise<CounterState>;
  get(trace?: TraceCarrier): Promise<CounterState | null>;
}

/** What the revocation object took after a revision: each entry with the revision that wrote it, oldest first. */
export interface RevocationChanges {
  /** The object's latest revision; lower than the one asked about when the object lost its storage. */
  latest: number;
  changes: { seq: number; revocation: Revocation }[];
}

/** The revocation object's (revocations.ts): a revocation, and what it took after the revision an isolate holds. */
export interface RevocationObjectRpc {
  /** `replaced`: the `jti`s of the token entries a client's cut now covers, which the object no longer keeps. */
  revoke(revocation: Revocation, replaced: string[], trace?: TraceCarrier): Promise<number>;
  /** At most a page of entries written after `version`. */
  since(version: number, trace?: TraceCarrier): Promise<RevocationChanges>;
}

/**
 * The metrics object's (isolate-metrics.ts): the pushes, which carry many requests' counts and no trace, and the
 * deployment's /metrics text for a scrape.
 */
export interface MetricsObjectRpc {
  push(batch: MetricsBatch): Promise<PushAnswer>;
  render(trace?: TraceCarrier): Promise<string>;
}

/** One push: counter and histogram deltas since the isolate's previous push, and its gauges as they read now. */
export interface MetricsBatch {
  isolate: string;
  seq: number;
  /** How often the isolate pushes (ms): the object forgets its gauges after three intervals without a push. */
  intervalMs: number;
  /** [family name, label values, delta]. */
  counters: [string, string[], number][];
  /** [family name, label values, per-bucket (not cumulative) counts with +Inf last, sum, count]. */
  histograms: [string, string[], number[], number, number][];
  /** [family name, label values, value]; null stands for NaN, which JSON cannot carry. */
  gauges: [string, string[], number | null][];
}

/** The object's answer: the highest sequence number it has counted for this isolate. */
export interface PushAnswer {
  seq: number;
}
