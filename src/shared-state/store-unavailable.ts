// The one error a shared store (Redis, a Durable Object, the Cache API) raises when it cannot answer in time:
// callers fall back to per-process behaviour on it, never to a 5xx (a fail-closed limit is the exception).

import type { SharedStoreName } from '../observability/telemetry.js';

export type { SharedStoreName };

export class StoreUnavailableError extends Error {
  constructor(
    readonly store: SharedStoreName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
