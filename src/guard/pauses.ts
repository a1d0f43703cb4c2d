// When the upstream is paused: an upstream 429's cooldown, the circuit breaker, and both told to and learned from the
// other replicas through the counter store. The upstream guard asks these before every upstream search call.
import type { Clock } from '../base/clock.js';
import type { BreakerStateName } from '../observability/guard-metrics.js';
import type { CounterStore } from '../shared-state/counter-store.js';

// An upstream 429 honoured: no upstream search call until its Retry-After (or UPSTREAM_COOLDOWN_SECONDS), whichever
// replica met it.

export interface Cooldown {
  /** Starts (or extends) the wait after a 429; `retryAfterMs` null: the configured default. */
  start(retryAfterMs: number | null): void;
  /** Another replica met a 429: wait at least `ms` from now too (not counted as a cooldown of this process). */
  learn(ms: number): void;
  /** Ms left (0: the upstream may be called). */
  remainingMs(): number;
}

export function createCooldown(options: {
  defaultMs: number;
  /** No pause outlives this (UPSTREAM_COOLDOWN_MAX_SECONDS), however it was learnt: a 429 or a shared window. */
  maxMs: number;
  clock: Clock;
  onStart?: () => void;
}): Cooldown {
  const { clock } = options;
  let until = 0;
  const bounded = (ms: number) => (Number.isFinite(ms) ? Math.min(Math.max(0, ms), options.maxMs) : options.defaultMs);
  return {
    start(retryAfterMs) {
      // Several calls in flight may all come back 429: the latest end wins, never an earlier one.
      until = Math.max(until, clock() + bounded(retryAfterMs ?? options.defaultMs));
      options.onStart?.();
    },
    learn(ms) {
      until = Math.max(until, clock() + bounded(ms));
    },
    remainingMs: () => Math.max(0, until - clock()),
  };
}

// The upstream circuit breaker: after N consecutive failures no upstream call for a while, then exactly one
// trial call decides whether calls resume (closed) or the wait starts again (open).

export interface CircuitBreakerOptions {
  /** Consecutive failures (errors or timeouts) that open it (UPSTREAM_BREAKER_FAILURES). */
  failures: number;
  /** How long it stays open before one trial call (UPSTREAM_BREAKER_OPEN_SECONDS). */
  openMs: number;
  clock: Clock;
  onOpen?: () => void;
}

/** A permission to call: exactly one of its three ends must be called once the call is over. */
export interface BreakerTicket {
  success(): void;
  /** True when this failure opened the breaker (the deployment is then told). */
  failure(): boolean;
  /** The call said nothing about the upstream's health (a 429, a missing token): a trial is given back. */
  neutral(): void;
}

export interface BreakerSnapshot {
  state: BreakerStateName;
  consecutiveFailures: number;
  /** Ms until a trial call may go (open), else 0. */
  retryInMs: number;
}

export interface CircuitBreaker {
  /** Ms to wait before a call could be admitted (0: it could go now). Changes nothing. */
  blockedForMs(): number;
  /** Admits one call (in half-open: the one trial), or returns the ms to wait. */
  admit(): BreakerTicket | number;
  /**
   * Another replica's breaker opened: no call from here either for `ms`, then this process's own one trial.
   * Not counted as an opening of this process.
   */
  openFor(ms: number): void;
  snapshot(): BreakerSnapshot;
}

/** While a trial is running, others are told to come back after this long. */
const TRIAL_WAIT_MS = 1_000;

export function createCircuitBreaker(options: CircuitBreakerOptions): CircuitBreaker {
  const { clock, openMs } = options;
  let consecutiveFailures = 0;
  let openUntil = 0;
  let trialRunning = false;
  // Set when the open period has passed: the next admitted call is the trial.
  let opened = false;

  function open(): void {
    opened = true;
    openUntil = clock() + openMs;
    options.onOpen?.();
  }

  function blockedForMs(): number {
    if (!opened) return 0;
    if (trialRunning) return TRIAL_WAIT_MS;
    return Math.max(0, openUntil - clock());
  }

  function ticket(trial: boolean): BreakerTicket {
    let done = false;
    const end =
      <T>(what: () => T, already: T) =>
      (): T => {
        if (done) return already;
        done = true;
        if (trial) trialRunning = false;
        return what();
      };
    return {
      success: end(() => {
        consecutiveFailures = 0;
        opened = false;
      }, undefined),
      failure: end(() => {
        consecutiveFailures++;
        // A failed trial opens it again at once; a call admitted before it opened adds nothing more.
        if (!(trial || (!opened && consecutiveFailures >= options.failures))) return false;
        open();
        return true;
      }, false),
      neutral: end(() => {}, undefined),
    };
  }

  return {
    blockedForMs,
    admit() {
      const wait = blockedForMs();
      if (wait > 0) return wait;
      if (!opened) return ticket(false);
      trialRunning = true;
      return ticket(true);
    },
    openFor(ms) {
      opened = true;
      openUntil = Math.max(openUntil, clock() + ms);
    },
    snapshot() {
      const state: BreakerStateName = !opened ? 'closed' : trialRunning || clock() >= openUntil ? 'half_open' : 'open';
      return { state, consecutiveFailures, retryInMs: blockedForMs() };
    },
  };
}

// What one replica learns of the upstream, told to every replica: an upstream 429's cooldown and the circuit
// breaker's opening, each kept as a window in the counter store (Redis, Durable Objects), so the deployment
// pauses together instead of each replica paying its own 429 or its own N failures.

type PauseKind = 'cooldown' | 'breaker';

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
