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

export function createNodeLogger(level: string, destination?: pino.DestinationStream): Logger {
  // One write(2) per line through libuv's thread pool cost more CPU than everything else on the hit
  // path; lines are gathered up to 4 KiB and flushed at least every 250 ms, so tailing stays live.
  const stream = destination ?? pino.destination({ sync: false, minLength: 4096 });
  if (!destination) {
    const timer = setInterval(() => {
      try {
        (stream as unknown as { flush(): void }).flush();
      } catch {
        // Not open yet, or closed at shutdown: the next tick or the final flushSync writes the rest.
      }
    }, 250);
    timer.unref();
  }
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
