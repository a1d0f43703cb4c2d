// Failed logins, two limits (shared by the deployment where the runtime has a shared limiter store): per address,
// and per client id and address. A client id alone is not limited: anyone could then lock a client out from
// everywhere by failing in its name. Each attempt is counted before the secret is checked and given back when it
// was right (rate-limiter-flexible's pattern for failed logins).
import type { Clock } from '../base/clock.js';
import type { StoreHealth } from '../shared-state/store-health.js';
import { createRateLimitFields, type RateLimitHeaderFormat } from './headers.js';
import { createLimit, type SharedLimiters } from './limit.js';

const LOGIN_POLICIES = { address: 'login-address', client: 'login-client' } as const;

interface LoginAttempt {
  allowed: boolean;
  /** When refused: seconds until the window that refused it ends. */
  retryAfterSeconds: number;
  /** When refused: `Retry-After` and the RateLimit fields of the policy that refused. */
  headers: Record<string, string>;
  /** The secret was right: the attempt is given back, so only failures stay counted. */
  succeeded(): Promise<void>;
}

export interface LoginThrottle {
  /** Takes one attempt from the client-and-address and the address budgets, before the secret is checked. */
  begin(clientId: string, address: string | undefined): Promise<LoginAttempt>;
}

export interface LoginThrottleOptions {
  /** The runtime's shared limiter store; while it is down each process counts alone. Absent: per process. */
  shared?: SharedLimiters | undefined;
  health?: StoreHealth | undefined;
  failuresPerClient: number;
  failuresPerAddress: number;
  windowSeconds: number;
  /** Keyed hash for the store's keys: addresses and made-up client ids never reach it in clear. */
  keyOf: (text: string) => Promise<string>;
  clock: Clock;
  /** RATELIMIT_HEADERS; default draft-11. */
  headerFormat?: RateLimitHeaderFormat;
}

export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { clock } = options;
  const limitOf = (keyPrefix: string, points: number) =>
    createLimit({
      spec: { keyPrefix, points, durationSeconds: options.windowSeconds },
      shared: options.shared,
      mode: 'memory',
      health: options.health,
      clock,
    });
  const perAddress = limitOf('login-fail:addr', options.failuresPerAddress);
  const perPair = limitOf('login-fail:pair', options.failuresPerClient);
  const fields = createRateLimitFields(
    [
      { name: LOGIN_POLICIES.address, quota: options.failuresPerAddress, windowSeconds: options.windowSeconds },
      { name: LOGIN_POLICIES.client, quota: options.failuresPerClient, windowSeconds: options.windowSeconds },
    ],
    options.headerFormat ?? 'draft-11',
  );
  const refused = (resetAt: number, policy: string, limit: number): LoginAttempt => {
    const retryAfterSeconds = Math.max(1, Math.ceil((resetAt - clock()) / 1000));
    return {
      allowed: false,
      retryAfterSeconds,
      headers: {
        ...fields.headers({ policy, limit, remaining: 0, resetSeconds: retryAfterSeconds }),
        'retry-after': String(retryAfterSeconds),
      },
      succeeded: async () => undefined,
    };
  };

  return {
    async begin(clientId, address) {
      const where = address ?? 'unknown';
      const addressKey = await options.keyOf(where);
      // Each count is atomic: a parallel burst cannot check more secrets than the limit allows. The address
      // first: an address past its budget creates nothing more, so a flood of invented client ids from one
      // address leaves at most its budget's worth of per-client keys.
      const byAddress = await perAddress.consume(addressKey);
      if (!byAddress.allowed) return refused(byAddress.resetAt, LOGIN_POLICIES.address, options.failuresPerAddress);
      const pairKey = await options.keyOf(`${clientId}\n${where}`);
      const byPair = await perPair.consume(pairKey);
      if (!byPair.allowed) {
        await perAddress.reward(addressKey);
        return refused(byPair.resetAt, LOGIN_POLICIES.client, options.failuresPerClient);
      }
      return {
        allowed: true,
        retryAfterSeconds: 0,
        headers: {},
        async succeeded() {
          await Promise.all([perPair.reward(pairKey), perAddress.reward(addressKey)]);
        },
      };
    },
  };
}
