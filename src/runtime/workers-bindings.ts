// Structural types of the Workers bindings the gateway uses (Durable Objects, Analytics Engine, the request's
// execution context), narrowed to the members called; only the Workers runtime files import them.

export interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException?(): void;
}

export interface DurableObjectStorage {
  get<T>(key: string): Promise<T | undefined>;
  put(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
  deleteAll(): Promise<void>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAlarm(): Promise<void>;
}

export interface DurableObjectState {
  readonly storage: DurableObjectStorage;
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
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
