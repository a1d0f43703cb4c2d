// The Node logger: pino writing one JSON line per event to stdout, asynchronously (off the request path).
import pino from 'pino';
import type { Logger } from '../../observability/logger.js';

/**
 * Field names that must never reach a log line, whatever a caller passes: written as "[redacted]".
 * Top-level paths only: wildcard paths cost a tenth of the hit path's CPU in the profile, and no call
 * site nests secrets (they are kept out at the source; see test/integration/ops.test.ts).
 */
const REDACT = [
  'authorization',
  'token',
  'accessToken',
  'access_token',
  'clientSecret',
  'client_secret',
  'secret',
  'password',
];

/**
 * pino's isoTime, formatting the date once per millisecond instead of once per line: under load many lines
 * share a millisecond, and toISOString was the largest single cost of a line in the hit-path profile.
 */
function isoTimeOncePerMillisecond(): () => string {
  let lastMs = -1;
  let last = '';
  return () => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      last = `,"time":"${new Date(now).toISOString()}"`;
    }
    return last;
  };
}

/** The longest a buffered line waits before it is written (nginx's `access_log ... flush=`), in milliseconds. */
export const LOG_FLUSH_MS = 250;

/**
 * The destination of the Node logger: sonic-boom (pino's own asynchronous destination) on stdout, writing once
 * 2 KiB have gathered, at most 4 KiB a write, and what is gathered every LOG_FLUSH_MS (so tailing stays live).
 * Measured on the hit path: one write(2) per line cost more CPU than all of the gateway's own code; bigger chunks
 * cost more than they save, because sonic-boom measures the byte length of its open chunk on every line.
 */
function createLogDestination(): pino.DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 2048, maxWrite: 4096, periodicFlush: LOG_FLUSH_MS });
}

export function createNodeLogger(level: string, destination?: pino.DestinationStream): Logger {
  // Buffered lines are written synchronously on exit and on a crash: flush(), called by main.ts's handlers.
  const stream = destination ?? createLogDestination();
  const log = pino(
    {
      level,
      base: { service: 'callerid-gateway' },
      timestamp: isoTimeOncePerMillisecond(),
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT, censor: '[redacted]' },
    },
    stream,
  );
  return {
    debug: (fields, msg) => log.debug(fields, msg),
    info: (fields, msg) => log.info(fields, msg),
    warn: (fields, msg) => log.warn(fields, msg),
    error: (fields, msg) => log.error(fields, msg),
    enabled: (lvl) => log.isLevelEnabled(lvl),
    flush: () => {
      const sonic = stream as { flushSync?: () => void };
      try {
        sonic.flushSync?.();
      } catch {
        // Not yet open or already ended: nothing left to write.
      }
    },
  };
}
