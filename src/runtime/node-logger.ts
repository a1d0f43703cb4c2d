// The Node logger: pino writing one JSON line per event to stdout.
import pino from 'pino';
import type { Logger } from '../observability/logger.js';

export function createNodeLogger(level: string, destination?: pino.DestinationStream): Logger {
  const log = pino(
    { level, base: { service: 'callerid-gateway' }, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    destination ?? pino.destination({ sync: false }),
  );
  return {
    debug: (fields, msg) => log.debug(fields, msg),
    info: (fields, msg) => log.info(fields, msg),
    warn: (fields, msg) => log.warn(fields, msg),
    error: (fields, msg) => log.error(fields, msg),
  };
}
