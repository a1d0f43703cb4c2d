// Whether a shared store answers: one log line and one metric move per transition (down, back up), never one
// per failed request, so an outage cannot flood the logs.
import type { Logger } from '../observability/logger.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { SharedStoreName } from './store-unavailable.js';

export interface StoreHealth {
  /** The store answered. */
  up(): void;
  /** The store failed; the caller has fallen back (per-process token, local tier, memory counters). */
  down(err: unknown): void;
  readonly isUp: boolean;
}

export function createStoreHealth(options: {
  store: SharedStoreName;
  kind: string;
  logger: Logger;
  telemetry: Telemetry;
}): StoreHealth {
  const { store, kind, logger, telemetry } = options;
  let isUp = true;
  telemetry.sharedStore(store, true);
  return {
    up() {
      if (isUp) return;
      isUp = true;
      telemetry.sharedStore(store, true);
      logger.info({ event: 'shared_store_up', store, kind }, `shared ${store} store answers again; sharing resumed`);
    },
    down(err) {
      telemetry.sharedStoreFallback(store);
      if (!isUp) return;
      isUp = false;
      telemetry.sharedStore(store, false);
      const reason = err instanceof Error ? err.message.slice(0, 200) : 'unknown';
      logger.warn(
        { event: 'shared_store_down', store, kind, reason },
        `shared ${store} store unreachable; this process falls back to its own state`,
      );
    },
    get isUp() {
      return isUp;
    },
  };
}
