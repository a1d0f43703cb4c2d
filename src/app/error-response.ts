// The app's onError: the answer to an error a request ended with, Hono's HTTPException included (the domain's
// errors know no framework: base/errors.ts).
import { HTTPException } from 'hono/http-exception';
import {
  errorCodes,
  GatewayError,
  problemAnswer,
  responseOf,
  type ErrorCode,
  type ProblemAnswer,
} from '../base/errors.js';
import { internalError, logIfFailed } from '../observability/error-log.js';
import type { Logger } from '../observability/logger.js';

const statusToCode = new Map<number, ErrorCode>(
  Object.entries(errorCodes).map(([code, { status }]) => [status, code as ErrorCode]),
);

/**
 * The answer to an error a request ended with (the app's onError): a GatewayError as its
 * problem (logged when the gateway or its upstream failed), an HTTPException below 500 by its status, anything else
 * as an internal error, logged with its stack.
 */
function errorAnswer(err: unknown, requestId: string, logger: Logger): ProblemAnswer {
  if (err instanceof GatewayError) {
    logIfFailed(err, requestId, logger);
    return problemAnswer(err.code, err.message, requestId, err.headers, err.extensions);
  }
  if (err instanceof HTTPException && err.status < 500) {
    const code = statusToCode.get(err.status) ?? 'bad_request';
    return problemAnswer(code, errorCodes[code].title, requestId, {});
  }
  const internal = internalError(err, requestId, logger);
  return problemAnswer(internal.code, internal.message, requestId);
}

/** {@link errorAnswer} as a Fetch API Response (the app's onError). */
export function errorResponse(err: unknown, requestId: string, logger: Logger): Response {
  return responseOf(errorAnswer(err, requestId, logger));
}
