// The one log line of a failed client login, whichever way the credentials came (the token endpoint's form, or
// HTTP Basic on the search and CNAM routes), so an operator's alert on `login_failed` sees every guess.
import type { Logger } from '../observability/logger.js';

export type LoginScheme = 'form' | 'basic';

/**
 * Logs `login_failed`. The id only when it is registered: an unknown one may be a secret pasted into the wrong
 * field, and must not reach the logs.
 */
export function logLoginFailed(
  logger: Logger,
  isRegistered: (id: string) => boolean,
  clientId: string | undefined,
  scheme: LoginScheme,
): void {
  const known = clientId !== undefined && isRegistered(clientId);
  logger.warn(
    {
      event: 'login_failed',
      reason: 'invalid_client',
      scheme,
      knownClient: known,
      clientId: known ? clientId : undefined,
    },
    'login failed',
  );
}
