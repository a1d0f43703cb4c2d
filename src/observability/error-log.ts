// How the gateway logs an error a request ended with: a failure of the gateway or its upstream (5xx) as a warning,
// an error it did not expect with its stack; neither reaches the caller's body.
import { GatewayError } from '../base/errors.js';
import type { Logger } from './logger.js';

/** A refusal because the gateway or its upstream failed (5xx) is logged; a refusal of the request is not. */
export function logIfFailed(err: GatewayError, requestId: string, logger: Logger): void {
  if (err.status >= 500)
    logger.warn({ event: 'request_failed', requestId, code: err.code, reason: err.message }, 'request failed');
}

/** An error the gateway did not expect, logged with its stack, as the 500 its caller gets (no internals in it). */
export function internalError(err: unknown, requestId: string, logger: Logger): GatewayError {
  logger.error(
    {
      event: 'unhandled_error',
      requestId,
      err: err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
    },
    'unhandled error',
  );
  return new GatewayError(
    'internal',
    `An internal error occurred; please contact support and quote request id ${requestId}.`,
    { cause: err },
  );
}
