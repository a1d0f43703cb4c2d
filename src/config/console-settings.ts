// The web console (docs/console.md): its provider filter and its own rate limits, per address and in total.
import { int, optionalText, setting } from './settings-table.js';

export const CONSOLE_SETTINGS = {
  console: {
    provider: setting('CONSOLE_PROVIDER', optionalText),
    rate: {
      perAddress: setting('CONSOLE_RATE_PER_ADDRESS', int(1, 1_000_000, 10)),
      total: setting('CONSOLE_RATE_TOTAL', int(1, 10_000_000, 300)),
      windowSeconds: setting('CONSOLE_RATE_WINDOW_SECONDS', int(1, 86_400, 60)),
    },
  },
};
