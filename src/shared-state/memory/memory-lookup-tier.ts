// The lookup tier of one process: what tests use to stand two lookup caches (two "replicas") in front of one
// shared tier, with the same retention, lease and purge fan-out semantics as the Redis tier.
import type { Clock } from '../../base/clock.js';
import { TIER_ENTRY_VERSION, type LookupTier, type PurgeListener, type TierEntry } from '../lookup-tier.js';

export function createMemoryLookupTier(options: { clock: Clock }): LookupTier {
  const { clock } = options;
  const entries = new Map<string, { entry: TierEntry; until: number }>();
  const leases = new Map<string, number>();
  const listeners = new Set<PurgeListener>();

  const notify = (key: string | null) => {
    for (const listener of listeners) listener(key);
  };

  return {
    kind: 'memory',
    async get(key) {
      const held = entries.get(key);
      if (held === undefined) return undefined;
      if (held.until <= clock()) {
        entries.delete(key);
        return undefined;
      }
      return held.entry.v === TIER_ENTRY_VERSION ? { ...held.entry } : undefined;
    },
    async set(key, entry) {
      const until = Math.max(entry.revalidateUntil, entry.staleIfErrorUntil);
      if (until > clock()) entries.set(key, { entry: { ...entry }, until });
    },
    async delete(key) {
      entries.delete(key);
      notify(key);
    },
    async clear() {
      entries.clear();
      notify(null);
    },
    async lease(key, ms) {
      const now = clock();
      const until = leases.get(key);
      if (until !== undefined && until > now) return false;
      leases.set(key, now + ms);
      return true;
    },
    async release(key) {
      leases.delete(key);
    },
    onPurge(listener) {
      listeners.add(listener);
    },
  };
}
