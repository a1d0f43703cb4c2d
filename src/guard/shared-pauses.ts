// What one replica learns of the upstream, told to every replica: an upstream 429's cooldown and the circuit
// breaker's opening, each kept as a window in the counter store (Redis, Durable Objects), so the deployment
// pauses together instead of each replica paying its own 429 or its own N failures.
import type { Clock } from '../clock.js';
import type { CounterStore } from '../shared-state/counter-store.js';

export type PauseKind = 'cooldown' | 'breaker';

export interface SharedPauses {
  /**
   * This process started a pause of `ms` (it met the 429, its breaker opened): opens a window of `ms` for the
   * deployment unless one is open already. Never rejects; bounded by the store's timeout.
   */
  announce(kind: PauseKind, ms: number): Promise<void>;
  /**
   * Reads the deployment's open pauses and hands each one this process did not announce itself to `onLearn`.
   * Concurrent callers share one read. Never rejects; bounded by the store's timeout.
   */
  learn(): Promise<void>;
}

export interface SharedPausesOptions {
  /** A counter store that does not reject (store-error mode `memory`: while it is down this is per process). */
  store: CounterStore;
  clock: Clock;
  onLearn: (kind: PauseKind, remainingMs: number) => void;
}

const KINDS: readonly PauseKind[] = ['cooldown', 'breaker'];
const keyOf = (kind: PauseKind) => `upstream-pause:${kind}`;
/**
 * A window this process announced comes back from the store a few ms later than its own end (the write's round
 * trip): within this much it is an echo, not news. Without it a breaker that closed after its trial would open
 * again for those few ms and trial again.
 */
const ECHO_MS = 50;

/** Without a shared store (one process) there is nothing to tell or learn. */
export const localPausesOnly: SharedPauses = {
  announce: async () => {},
  learn: async () => {},
};

export function createSharedPauses(options: SharedPausesOptions): SharedPauses {
  const { store, clock, onLearn } = options;
  const announcedUntil: Record<PauseKind, number> = { cooldown: 0, breaker: 0 };
  let reading: Promise<void> | null = null;

  async function read(): Promise<void> {
    const states = await Promise.all(KINDS.map((kind) => store.get(keyOf(kind)).catch(() => null)));
    const now = clock();
    for (const [i, state] of states.entries()) {
      const kind = KINDS[i]!;
      if (state === null || state.resetAt <= now || state.resetAt <= announcedUntil[kind] + ECHO_MS) continue;
      onLearn(kind, state.resetAt - now);
    }
  }

  return {
    async announce(kind, ms) {
      try {
        const state = await store.add(keyOf(kind), 1, Math.max(1, Math.ceil(ms)));
        announcedUntil[kind] = Math.max(announcedUntil[kind], state.resetAt);
      } catch {
        // The store's wrapper already fell back and said so; this process keeps its own pause either way.
      }
    },
    learn() {
      reading ??= read().finally(() => {
        reading = null;
      });
      return reading;
    },
  };
}
