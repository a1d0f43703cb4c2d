// A request as every door hands it to runtime-neutral code (the search contract), and the rules read from its parts
// alone, the same on every runtime: its request id, its Host field, and a body on a method that takes none.
import { problemAnswer, type ProblemAnswer } from '../errors.js';

export interface RequestParts {
  method: string;
  /** The request target as sent: origin-form (`/path?query`) or the URL the runtime built from it. */
  target: string;
  /** A header field by lower-case name as the Fetch API reads it: repeated fields joined with ", ". */
  header(name: string): string | undefined;
  /** The connection's peer address (Node: the socket; Workers: CF-Connecting-IP), before any proxy logic. */
  peerAddress(): string | undefined;
  /** The request id the runtime's app already gave this request; absent, it is derived from `X-Request-Id`. */
  requestId?: string | undefined;
}

// A caller's id is kept when it is 1 to 64 characters of [A-Za-z0-9_=-]: long enough for a UUID or a trace id,
// short and plain enough to log and echo (no CR/LF, no quotes).
const GOOD_REQUEST_ID = /^[\w\-=]{1,64}$/;

/** The request id: the caller's `X-Request-Id` when well formed, else a new UUID. */
export const requestIdOf = (header: string | undefined): string =>
  header !== undefined && GOOD_REQUEST_ID.test(header) ? header : crypto.randomUUID();

// RFC 9110 section 7.2: Host = uri-host [ ":" port ], uri-host an IP literal in brackets or a reg-name (letters,
// digits, `-._~`, sub-delims, percent-encoded octets). No space, no comma (two Host fields read as one), no `@`.
const HOST = /^(?:\[[0-9A-Fa-f:.vV]+\]|(?:[A-Za-z0-9\-._~!$&'()*+;=]|%[0-9A-Fa-f]{2})*)(?::\d*)?$/;

/** Whether a Host field is absent (HTTP/1.0, or a runtime that does not show it) or well formed. */
export const hostIsValid = (host: string | undefined): boolean => host === undefined || HOST.test(host);

/**
 * The largest body a request to a route that takes none may declare: a few clients send an empty JSON object or a
 * stray form with a GET, and a kilobyte costs nothing to skip; anything larger, or chunked (its length unknown), is
 * refused before a byte of it is read.
 */
export const NO_BODY_MAX_BYTES = 1024;

/** The bound of a request's body by its path, for routes that take one (REQUEST_MAX_BODY_BYTES, the batch's own). */
export type BodyBoundOf = (path: string) => number;

export function tooLargeMessage(maxBytes: number): string {
  return `The request body may hold at most ${maxBytes} bytes.`;
}

/** Methods whose routes here take no body. */
const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);

/** Whether a request to a route taking no body declares one over {@link NO_BODY_MAX_BYTES}, or chunked. */
export function declaresUnwantedBody(
  method: string,
  contentLength: string | undefined,
  transferEncoding: string | undefined,
): boolean {
  if (!BODILESS.has(method)) return false;
  if (transferEncoding !== undefined) return true;
  if (contentLength === undefined) return false;
  // A malformed length is refused too: it cannot be shown to be small.
  return !/^\d{1,16}$/.test(contentLength) || Number(contentLength) > NO_BODY_MAX_BYTES;
}

/** The refusal of a body on a route that takes none: 413, and the connection closed before the body is read. */
export const unwantedBodyAnswer = (requestId: string): ProblemAnswer =>
  problemAnswer(
    'payload_too_large',
    `This route takes no request body; at most ${NO_BODY_MAX_BYTES} bytes are skipped, and never a chunked one.`,
    requestId,
    { connection: 'close' },
  );

/** The refusal of a malformed Host field (RFC 9112 section 3.2: 400). */
export const badHostAnswer = (requestId: string): ProblemAnswer =>
  problemAnswer('bad_request', 'The Host header field is not a valid host.', requestId, { connection: 'close' });

/** The refusal a request earns by its parts alone, before anyone reads it: a bad Host, an unwanted body. */
export function requestRefusal(parts: RequestParts, requestId: string): ProblemAnswer | undefined {
  if (!hostIsValid(parts.header('host'))) return badHostAnswer(requestId);
  if (declaresUnwantedBody(parts.method, parts.header('content-length'), parts.header('transfer-encoding')))
    return unwantedBodyAnswer(requestId);
  return undefined;
}
