// Failed logins, counted in the counter store (shared by the deployment where it is Redis or a Durable
// Object): per client id and address, and per address. A client id alone is not limited: anyone could then
// lock a client out from everywhere by failing in its name.
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import type { Telemetry } from '../observability/telemetry.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import { createMemoryCounterStore } from '../shared-state/memory-counter-store.js';
import { createStoreHealth, type StoreHealth } from '../shared-state/store-health.js';
import { StoreUnavailableError } from '../shared-state/store-unavailable.js';

export interface LoginAttempt {
  allowed: boolean;
  /** When refused: seconds until the window that refused it ends. */
  retryAfterSeconds: number;
  /** The secret was right: the attempt is given back, so only failures stay counted. */
  succeeded(): Promise<void>;
}

export interface LoginThrottle {
  /** Takes one attempt from the client-and-address and the address budgets, before the secret is checked. */
  begin(clientId: string, address: string | undefined): Promise<LoginAttempt>;
}

export interface LoginThrottleOptions {
  counters: CounterStore;
  failuresPerClient: number;
  failuresPerAddress: number;
  windowSeconds: number;
  /** Keyed hash for the store's keys: addresses and made-up client ids never reach it in clear. */
  keyOf: (text: string) => Promise<string>;
  clock: Clock;
  logger: Logger;
  telemetry: Telemetry;
}

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { counters, clock } = options;
  const windowMs = options.windowSeconds * 1000;
  // A shared store that does not answer: this process counts alone until it answers again.
  const local = counters.kind === 'memory' ? counters : createMemoryCounterStore({ clock });
  let health: StoreHealth | undefined;

  async function onStore<T>(op: (store: CounterStore) => Promise<T>): Promise<T> {
    if (local === counters) return op(counters);
    health ??= createStoreHealth({ store: 'counter', kind: counters.kind, logger: options.logger, telemetry: options.telemetry });
    try {
      const result = await op(counters);
      health.up();
      return result;
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      health.down(err);
      return op(local);
    }
  }

  const refused = (resetAt: number): LoginAttempt => ({
    allowed: false,
    retryAfterSeconds: Math.max(1, Math.ceil((resetAt - clock()) / 1000)),
    succeeded: async () => undefined,
  });

  return {
    async begin(clientId, address) {
      const where = address ?? 'unknown';
      const pairKey = `login-fail:pair:${await options.keyOf(`${clientId}\n${where}`)}`;
      const addressKey = `login-fail:addr:${await options.keyOf(where)}`;
      // consume() is atomic: a parallel burst cannot check more secrets than the limit allows.
      const pair = await onStore((s) => s.consume(pairKey, 1, options.failuresPerClient, windowMs));
      if (!pair.allowed) return refused(pair.resetAt);
      const perAddress = await onStore((s) => s.consume(addressKey, 1, options.failuresPerAddress, windowMs));
      if (!perAddress.allowed) {
        await onStore((s) => s.add(pairKey, -1, windowMs));
        return refused(perAddress.resetAt);
      }
      return {
        allowed: true,
        retryAfterSeconds: 0,
        async succeeded() {
          await onStore((s) => s.add(pairKey, -1, windowMs));
          await onStore((s) => s.add(addressKey, -1, windowMs));
        },
      };
    },
  };
}
