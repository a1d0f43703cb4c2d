// The Node logger: pino writing one JSON line per event to stdout, in batches (log-destination.ts).
import pino from 'pino';
import { createLogDestination } from './log-destination.js';
import { jsonString, type Logger } from '../../observability/logger.js';

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
 * `new Date(now).toISOString()`, with the date and time up to the second formatted once per second: only the
 * milliseconds are written per line. toISOString was the largest single cost of a line in the hit-path profile.
 */
export function createIsoTime(): (now: number) => string {
  let second = Number.NaN;
  let prefix = '';
  return (now) => {
    const s = Math.floor(now / 1000);
    if (s !== second) {
      second = s;
      // Up to and with the '.', as in 2026-11-25T15:08:18.
      prefix = new Date(s * 1000).toISOString().slice(0, -4);
    }
    const ms = now - s * 1000;
    return `${prefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
  };
}

/** pino's isoTime (its `,"time":"…"` field), the same string again for lines of the same millisecond. */
function isoTimeField(): () => string {
  const iso = createIsoTime();
  let lastMs = -1;
  let last = '';
  return () => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      last = `,"time":"${iso(now)}"`;
    }
    return last;
  };
}

const SERVICE = 'callerid-gateway';

/**
 * The destination on stdout. Node's own stdout stream, made here, puts a pipe in non-blocking mode, so a log
 * collector that stops reading delays lines instead of stalling the gateway (see log-destination.ts).
 */
function stdoutDestination(): pino.DestinationStream {
  return createLogDestination({ fd: process.stdout.fd });
}

export function createNodeLogger(level: string, destination?: pino.DestinationStream): Logger {
  // Buffered lines are written synchronously on exit and on a crash: flush(), called by main.ts's handlers.
  const stream = destination ?? stdoutDestination();
  const time = isoTimeField();
  const log = pino(
    {
      level,
      base: { service: SERVICE },
      timestamp: time,
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
    // The line pino writes for these fields (same order: level, time, base, fields, msg), onto pino's own stream.
    json: (lvl, fieldsJson, msg) => {
      if (log.isLevelEnabled(lvl))
        stream.write(`{"level":"${lvl}"${time()},"service":"${SERVICE}",${fieldsJson},"msg":${jsonString(msg)}}\n`);
    },
    flush: () => {
      (stream as { flushSync?: () => void }).flushSync?.();
    },
    dropped: () => (stream as { dropped?: number }).dropped ?? 0,
  };
}
