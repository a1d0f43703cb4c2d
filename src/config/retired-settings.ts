// The settings the gateway no longer reads, each with where its job went.
import { CONSOLE_QUOTA_PER_DAY } from './limit-settings.js';

/**
 * Names the gateway no longer reads, each with where its job went. One of them set stops the start with that line:
 * silently ignoring it would change the deployment's behaviour without a word.
 */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  CONSOLE_RATE_KEY_PREFIX: "is no longer read: the console limits' keys sit under REDIS_KEY_PREFIX",
  CONSOLE_UPSTREAM_QUOTA_PER_DAY: `is no longer read: give the console's quota as console:N in CLIENT_UPSTREAM_QUOTAS (default ${CONSOLE_QUOTA_PER_DAY})`,
  CONSOLE_RATE_ON_STORE_ERROR: 'is no longer read: use LIMITS_ON_STORE_ERROR (the console limits, quotas and budget)',
  QUOTA_ON_STORE_ERROR: 'is no longer read: use LIMITS_ON_STORE_ERROR (the console limits, quotas and budget)',
  ...Object.fromEntries(
    [
      'UPSTREAM_RESULTS_PATH',
      'UPSTREAM_PROVIDER_PATH',
      'UPSTREAM_TOTAL_PATH',
      'UPSTREAM_PROVIDER_NAME_PATH',
      'UPSTREAM_DISPLAY_NAME_PATH',
    ].map((name) => [
      name,
      "is no longer read: the gateway reads the upstream's one search body at fixed places (docs/configuration.md)",
    ]),
  ),
  LOOKUP_DEADLINE_MS:
    'is no longer read: a search waits up to UPSTREAM_TIMEOUT_MS unless its caller sends Prefer: wait=N',
  CACHE_SHARED_FILL_WAIT_MS: "is no longer read: a miss waits up to UPSTREAM_TIMEOUT_MS for another replica's fill",
};
