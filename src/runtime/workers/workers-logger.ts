// The Workers logger: one JSON object per line on the console (Workers Logs collect it), as pino writes on Node.
import type { Logger, LogFields } from '../../observability/logger.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

export function createConsoleLogger(level: string): Logger {
  const min = LEVELS.indexOf(level as (typeof LEVELS)[number]);
  const write = (lvl: (typeof LEVELS)[number]) => (fields: LogFields, msg: string) => {
    if (min < 0 || LEVELS.indexOf(lvl) < min) return;
    console.log(
      JSON.stringify({ level: lvl, time: new Date().toISOString(), service: 'callerid-gateway', ...fields, msg }),
    );
  };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    enabled: (lvl) => min >= 0 && LEVELS.indexOf(lvl) >= min,
  };
}
