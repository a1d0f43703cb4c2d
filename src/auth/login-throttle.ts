// Failed logins, counted in the counter store (shared by the deployment where it is Redis or a Durable
// Object): per client id and address, and per address. A client id alone is not limited: anyone could then
// lock a client out from everywhere by failing in its name.
import type { Clock } from '../clock.js';
import type { CounterStore } from '../shared-state/counter-store.js';

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
  /** The deployment's counters, with their per-process fallback while a shared store is down (services). */
  counters: CounterStore;
  failuresPerClient: number;
  failuresPerAddress: number;
  windowSeconds: number;
  /** Keyed hash for the store's keys: addresses and made-up client ids never reach it in clear. */
  keyOf: (text: string) => Promise<string>;
  clock: Clock;
}

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { counters, clock } = options;
  const windowMs = options.windowSeconds * 1000;
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
      // consume() is atomic: a parallel burst cannot check more secrets than the limit allows. The address first:
      // an address past its budget creates nothing more, so a flood of invented client ids from one address
      // leaves at most its budget's worth of per-client keys.
      const perAddress = await counters.consume(addressKey, 1, options.failuresPerAddress, windowMs);
      if (!perAddress.allowed) return refused(perAddress.resetAt);
      const pair = await counters.consume(pairKey, 1, options.failuresPerClient, windowMs);
      if (!pair.allowed) {
        await counters.add(addressKey, -1, windowMs);
        return refused(pair.resetAt);
      }
      return {
        allowed: true,
        retryAfterSeconds: 0,
        async succeeded() {
          await counters.add(pairKey, -1, windowMs);
          await counters.add(addressKey, -1, windowMs);
        },
      };
    },
  };
}
