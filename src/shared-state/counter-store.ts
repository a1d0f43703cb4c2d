// The counter-store port: one count per key for the whole deployment, for limits, quotas and budgets.
// Implementations: memory (one process, tests), Redis (Node replicas), Durable Objects (Workers).

export interface CounterState {
  count: number;
  /** Epoch ms the key's window ends (its count starts again from 0). */
  resetAt: number;
}

export interface CounterDecision extends CounterState {
  allowed: boolean;
}

export interface CounterStore {
  readonly kind: 'memory' | 'redis' | 'durable-object';
  /**
   * Adds `points` to `key` unless that would take its count past `limit`; a refusal counts nothing.
   * Atomic across the deployment, so a burst cannot overshoot. The key's window opens with its first
   * count and lasts `windowMs` (a daily quota puts the day in the key and ends its window at midnight).
   * Rejects with StoreUnavailableError when the store cannot be reached.
   */
  consume(key: string, points: number, limit: number, windowMs: number): Promise<CounterDecision>;
  /**
   * Adds `points` (negative: takes them back, e.g. an upstream call that failed is not charged) without a
   * limit, opening a window of `windowMs` if none is open; returns the new state. Also how counts taken
   * locally on the hit path are reconciled in the background.
   */
  add(key: string, points: number, windowMs: number): Promise<CounterState>;
  /** The state of `key`, or null when its window is not open. */
  get(key: string): Promise<CounterState | null>;
}
