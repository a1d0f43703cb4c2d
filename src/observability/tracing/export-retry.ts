// When an export request is tried again (OpenTelemetry specification, "OTLP/HTTP", "Retryable Response Codes" and
// "OTLP Exporter", retries): after a 429, 502, 503 or 504 and after a connection that failed, with exponential
// backoff and jitter, or after the collector's `Retry-After`; every try inside the export timeout, at most
// MAX_ATTEMPTS of them. Any other answer is final.
import { parseRetryAfter } from '../../base/retry-after.js';

/** Why an export's spans never reached the collector: the one closed set `trace_spans_dropped_total` counts by. */
export type DropCause = 'queue_full' | 'refused' | 'unavailable' | 'unreachable' | 'timeout' | 'bad_answer';

export const DROP_CAUSES: readonly DropCause[] = [
  'queue_full',
  'refused',
  'unavailable',
  'unreachable',
  'timeout',
  'bad_answer',
];

/** Tries of one export request at most, the first included (the OpenTelemetry SDKs' default). */
export const MAX_ATTEMPTS = 5;
// The SDKs' backoff: 1 s, then 1.5 times longer each time, at most 5 s, each moved by up to a fifth either way.
const INITIAL_BACKOFF_MS = 1_000;
const BACKOFF_MULTIPLIER = 1.5;
const MAX_BACKOFF_MS = 5_000;
const JITTER = 0.2;

const RETRYABLE_STATUSES = new Set([429, 502, 503, 504]);

/** Whether an answer's status asks for the same request later. */
export const retryableStatus = (status: number): boolean => RETRYABLE_STATUSES.has(status);

/** The pause before try `attempt + 1` (`attempt` counted from 1), with `random` in [0, 1) for the jitter. */
export function backoffMs(attempt: number, random: number): number {
  const base = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * BACKOFF_MULTIPLIER ** (attempt - 1));
  return Math.round(base * (1 + JITTER * (2 * random - 1)));
}

/** What a failed try leaves to the next: its cause, and the wait the collector asked for (null: none said). */
export interface FailedTry {
  readonly cause: DropCause;
  readonly retry: boolean;
  readonly retryAfter?: string | null;
}

/**
 * The wait before the next try, or undefined when there is none: the failure is final, the attempts are spent, or
 * the wait would end past `deadline` (the export timeout: a collector asking for longer than that is given up on).
 */
export function nextTryIn(failed: FailedTry, attempt: number, now: number, deadline: number): number | undefined {
  if (!failed.retry || attempt >= MAX_ATTEMPTS) return undefined;
  const wait = parseRetryAfter(failed.retryAfter, now) ?? backoffMs(attempt, Math.random());
  return now + wait < deadline ? wait : undefined;
}
