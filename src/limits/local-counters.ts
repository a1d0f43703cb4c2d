// Counts taken on this process, at once and without a network round trip, and reconciled with the counter
// store in the background (as Unkey's async rate limits): the cache-hit path counts here. A decision sees the
// deployment's count as of the last reconciliation plus this process's count since, so replicas together can
// overshoot a limit by at most what they count within one reconciliation interval.
import type { Clock } from '../base/clock.js';
import type { CounterStore } from '../shared-state/counter-store.js';
import type { RunInBackground } from '../shared-state/background.js';

interface LocalDecision {
  allowed: boolean;
  /** The count as this process knows it, this take included when allowed. */
  count: number;
  resetAt: number;
}

export interface LocalCounters {
  /**
   * Counts one on `key` unless that would pass `limit`; synchronous. The window ends at `resetAt`. `now` (default the
   * clock) lets a caller that has just read the clock pass it on.
   */
  take(key: string, limit: number, resetAt: number, now?: number): LocalDecision;
  /** Counts `points` on `key` without a limit (usage figures). */
  add(key: string, points: number, resetAt: number, now?: number): void;
  /** The count as this process knows it (0 when the window is not open). */
  peek(key: string, now?: number): number;
  /** Reconciles every key counted since the last time with the store; what the background runs. */
  sync(): Promise<void>;
}

export interface LocalCountersOptions {
  /** A store that does not reject (its store-error mode applied): a failed reconciliation keeps counting here. */
  store: Pick<CounterStore, 'add'>;
  clock: Clock;
  background: RunInBackground;
  /** Reconcile at most this often (and at least this soon after a count). */
  intervalMs: number;
  /** Waits before a deferred reconciliation; default a timer. */
  delay?: (ms: number) => Promise<void>;
}

interface Entry {
  /** The deployment's count at the last reconciliation. */
  shared: number;
  /** Sent to the store, answer not yet back. */
  sending: number;
  /** Counted here since. */
  pending: number;
  resetAt: number;
}

const timerDelay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createLocalCounters(options: LocalCountersOptions): LocalCounters {
  const { store, clock, background, intervalMs } = options;
  const delay = options.delay ?? timerDelay;
  const entries = new Map<string, Entry>();
  let lastSync = -Infinity;
  let scheduled = false;

  function entryOf(key: string, resetAt: number, now: number): Entry {
    let e = entries.get(key);
    if (e === undefined || e.resetAt <= now) {
      e = { shared: 0, sending: 0, pending: 0, resetAt };
      entries.set(key, e);
    }
    return e;
  }

  const known = (e: Entry) => e.shared + e.sending + e.pending;

  function schedule(now: number): void {
    if (scheduled) return;
    scheduled = true;
    const wait = lastSync + intervalMs - now;
    background((wait > 0 ? delay(wait) : Promise.resolve()).then(sync));
  }

  async function sync(): Promise<void> {
    scheduled = false;
    const now = clock();
    lastSync = now;
    const work: Promise<void>[] = [];
    for (const [key, e] of entries) {
      if (e.resetAt <= now) {
        if (e.sending === 0) entries.delete(key);
        continue;
      }
      if (e.pending === 0 || e.sending > 0) continue;
      const points = e.pending;
      e.pending = 0;
      e.sending = points;
      work.push(
        store.add(key, points, e.resetAt - now).then(
          (state) => {
            e.shared = Math.max(e.shared + points, state.count);
            e.sending = 0;
          },
          () => {
            // Not counted anywhere else: keep it here and send it again next time.
            e.pending += points;
            e.sending = 0;
          },
        ),
      );
    }
    await Promise.all(work);
    // Counted while the answers were on their way: those go next time.
    for (const e of entries.values()) {
      if (e.pending > 0) {
        schedule(clock());
        break;
      }
    }
  }

  return {
    take(key, limit, resetAt, now = clock()) {
      const e = entryOf(key, resetAt, now);
      if (known(e) + 1 > limit) return { allowed: false, count: known(e), resetAt: e.resetAt };
      e.pending++;
      schedule(now);
      return { allowed: true, count: known(e), resetAt: e.resetAt };
    },
    add(key, points, resetAt, now = clock()) {
      entryOf(key, resetAt, now).pending += points;
      schedule(now);
    },
    peek(key, now = clock()) {
      const e = entries.get(key);
      return e === undefined || e.resetAt <= now ? 0 : known(e);
    },
    sync,
  };
}
