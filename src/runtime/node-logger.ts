// The Node logger: pino writing one JSON line per event to stdout, asynchronously (off the request path).
import pino from 'pino';
import type { Logger } from '../observability/logger.js';

/** Field names that must never reach a log line, whatever a caller passes: written as "[redacted]". */
const REDACT = [
  'authorization',
  'token',
  'accessToken',
  'access_token',
  'clientSecret',
  'client_secret',
  'secret',
  'password',
  '*.authorization',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.clientSecret',
  '*.client_secret',
  '*.secret',
  '*.password',
];

export function createNodeLogger(level: string, destination?: pino.DestinationStream): Logger {
  const stream = destination ?? pino.destination({ sync: false });
  const log = pino(
    {
      level,
      base: { service: 'callerid-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
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
