// The upstream circuit breaker: after N consecutive failures no upstream call for a while, then exactly one
// trial call decides whether calls resume (closed) or the wait starts again (open).
import type { Clock } from '../clock.js';
import type { BreakerStateName } from '../observability/guard-metrics.js';

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
