// The token store of one process: what the memory column of DESIGN's table means, and what tests use to
// stand two token managers (two "replicas") in front of one store.
import type { Clock } from '../../base/clock.js';
import type { SharedToken, TokenRefreshOptions, TokenStore } from '../token-store.js';

export function createMemoryTokenStore(options: { clock: Clock }): TokenStore {
  const { clock } = options;
  let published: SharedToken | null = null;
  let generation = 0;
  let pending: Promise<SharedToken> | null = null;

  const satisfies = (token: SharedToken | null, wanted: TokenRefreshOptions): token is SharedToken =>
    token !== null &&
    (wanted.newerThan === null || token.generation > wanted.newerThan) &&
    token.expiresAt - clock() >= wanted.validForMs;

  return {
    kind: 'memory',
    async read() {
      return published !== null && published.expiresAt > clock() ? published : null;
    },
    async refresh(obtain, wanted) {
      if (satisfies(published, wanted)) return published;
      // Single flight: every caller arriving while one obtains joins it.
      pending ??= (async () => {
        try {
          const obtained = await obtain();
          published = { ...obtained, generation: ++generation };
          return published;
        } finally {
          pending = null;
        }
      })();
      return pending;
    },
    async offer(token) {
      if (published !== null && published.expiresAt > clock()) return published;
      // Someone is logging in: its token will be published; offering ours now would only be overwritten.
      if (pending !== null) return null;
      published = { ...token, generation: ++generation };
      return published;
    },
    async dropIfCurrent(current) {
      if (published === null || published.generation !== current) return false;
      published = null;
      return true;
    },
  };
}
