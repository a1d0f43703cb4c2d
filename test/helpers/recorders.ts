// In-memory stand-ins for the logger and telemetry ports, so tests can read what was reported, and a
// helper to read the GatewayError a call rejects with.
import { expect } from 'vitest';
import { GatewayError } from '../../src/base/errors.js';
import type { LogFields, Logger } from '../../src/observability/logger.js';
import { noopTelemetry, type Telemetry } from '../../src/observability/telemetry.js';

export interface CapturedLog {
  level: string;
  fields: LogFields;
  msg: string;
}

/** A logger that keeps every line, so tests can read what would have been written. */
export function captureLogger(): Logger & { lines: CapturedLog[] } {
  const lines: CapturedLog[] = [];
  const at = (level: string) => (fields: LogFields, msg: string) => void lines.push({ level, fields, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A logger that counts lines by message and keeps none of them: for floods, where keeping each line would be the leak. */
export function countingLogger(counts: Map<string, number>): Logger {
  const count = (_fields: LogFields, msg: string) => void counts.set(msg, (counts.get(msg) ?? 0) + 1);
  return { debug: count, info: count, warn: count, error: count };
}

/** Telemetry that records the upstream and token events in order, e.g. ['upstreamCall', 'token', 'ok']. */
export function recordingTelemetry(): { telemetry: Telemetry; events: unknown[][] } {
  const events: unknown[][] = [];
  const telemetry: Telemetry = {
    ...noopTelemetry,
    upstreamCall: (endpoint, outcome) => events.push(['upstreamCall', endpoint, outcome]),
    tokenRefresh: (result, reason) => events.push(['tokenRefresh', result, reason]),
    cacheLookup: () => {},
    consoleRefused: () => {},
    sharedStore: () => {},
    sharedStoreFallback: () => {},
  };
  return { telemetry, events };
}

/** Awaits a promise expected to reject with a GatewayError, and returns that error. */
export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected a rejection');
}
