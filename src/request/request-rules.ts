// The rules every request meets before any route, on every listener and door: a valid Host (one at all on HTTP/1.1), no
// body where the route takes none, one Authorization field, no target that starts under /console and leaves it, and a
// target in a form the gateway serves. One function decides;
// Node's listeners apply it before the Hono adapter sees the request, the app applies it as its first middleware.
import { CLIENT_CHALLENGE } from '../auth/client-authenticator.js';
import { GatewayError } from '../base/errors.js';
import type { RequestParts } from './request-parts.js';

/**
 * The largest body a request to a route that takes none may declare: a few clients send an empty JSON object or a
 * stray form with a GET, and a kilobyte costs nothing to skip; anything larger, or with any Transfer-Encoding (its
 * length unknown), is refused before a byte of it is read.
 */
const NO_BODY_MAX_BYTES = 1024;

export function tooLargeMessage(maxBytes: number): string {
  return `The request body may hold at most ${maxBytes} bytes.`;
}

/** The bound of a request's body by its path, for routes that take one (REQUEST_MAX_BODY_BYTES, the batch's own). */
export type BodyBoundOf = (path: string) => number;

/** Whether a request's route takes a body, by its method (the gateway's bodies come with POST alone). */
export type TakesBody = (method: string) => boolean;

/** On the API listener: POST, PUT and PATCH carry bodies; the metrics listener takes none at all. */
export const bodyByMethod: TakesBody = (method) => method === 'POST' || method === 'PUT' || method === 'PATCH';

/** Whether a request to a route taking no body declares one over {@link NO_BODY_MAX_BYTES}, or any Transfer-Encoding. */
function declaresUnwantedBody(contentLength: string | undefined, transferEncoding: string | undefined): boolean {
  if (transferEncoding !== undefined) return true;
  if (contentLength === undefined) return false;
  // A malformed length is refused too: it cannot be shown to be small.
  return !/^\d{1,16}$/.test(contentLength) || Number(contentLength) > NO_BODY_MAX_BYTES;
}

// RFC 9112 section 3.2 and RFC 3986 section 3.2.2: Host = uri-host [ ":" port ]. A name here is what a URL parser
// also takes as one: labels of letters, digits, `-`, `_` and `~` (no percent-encoding, no `@`, no space, no comma:
// two Host fields read as one); a name whose last label is a number must be a whole dotted IPv4 address; an IPv6
// literal is checked by the URL parser itself. The port, when given, is 1 to 65535.
const HOST = /^(?:(\[[0-9A-Fa-f:.]+\])|([A-Za-z0-9_~-]+(?:\.[A-Za-z0-9_~-]+)*\.?))(?::([1-9]\d{0,4}))?$/;
const NUMERIC_LABEL = /(?:^|\.)(?:\d+|0[xX][0-9A-Fa-f]*)\.?$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Whether a Host field is absent (HTTP/1.0, or a runtime that does not show it) or well formed. */
export function hostIsValid(host: string | undefined): boolean {
  if (host === undefined) return true;
  const match = HOST.exec(host);
  if (match === null) return false;
  const [, literal, name, port] = match;
  if (port !== undefined && Number(port) > 65_535) return false;
  if (literal === undefined && NUMERIC_LABEL.test(name!) && !IPV4.test(name!)) return false;
  return isOwnHostname(literal ?? name!);
}

/**
 * Whether a URL parser reads a host as itself (case aside), as Node's Hono adapter requires when it builds the
 * request's URL: not `[0:0::1]` (read as `[::1]`), nor a name it refuses (an IDNA label it finds invalid).
 */
function isOwnHostname(host: string): boolean {
  if (!URL.canParse(`http://${host}/`)) return false;
  return new URL(`http://${host}/`).hostname === host.toLowerCase();
}

/** The scheme and authority of an absolute-form target (`GET http://host/console/../x HTTP/1.1`), RFC 9112 3.2.2. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * Whether a request target as sent starts under /console and leaves it by dot segments (RFC 3986 section 5.2.4),
 * unreserved characters percent-decoded first (`/%63onsole/../healthz`, `/./console/%2e%2e/healthz`): the console
 * answers 404 for everything under /console it does not serve, and a target cannot reach another route through it.
 */
export function leavesConsole(target: string): boolean {
  // Without a percent sign or a dot segment in its path, a target cannot leave where it starts (the usual case).
  const queryAt = target.search(/[?#]/);
  const pathEnd = queryAt === -1 ? target.length : queryAt;
  const percentAt = target.indexOf('%');
  const dotAt = target.indexOf('/.');
  if ((percentAt === -1 || percentAt >= pathEnd) && (dotAt === -1 || dotAt >= pathEnd)) return false;
  const path = pathOf(target);
  if (!path.includes('%') && !/console/i.test(path)) return false;
  const decoded = path.replace(/%(2[dDeE]|3\d|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  const stack: string[] = [];
  let wasUnder = false;
  for (const segment of decoded.split(/\/|%2[fF]/).slice(1)) {
    if (segment === '..') stack.pop();
    else if (segment !== '.') stack.push(segment);
    if (stack[0]?.toLowerCase() === 'console') wasUnder = true;
  }
  return wasUnder && stack[0]?.toLowerCase() !== 'console';
}

export interface RequestRules {
  /** Whether the route of a method takes a body (the API listener: {@link bodyByMethod}). */
  takesBody: TakesBody;
  /** The largest body a route that takes one accepts, by path; a larger declared Content-Length is refused unread. */
  boundOf: BodyBoundOf;
  /** The last Host found valid, kept by the listener's rules: its clients send the same one with every request. */
  lastValidHost?: string | undefined;
}

/**
 * Whether a request target has a form the gateway serves (RFC 9112 section 3.2): origin-form (`/path?query`), or
 * absolute-form with the `http` or `https` scheme (written in lower case, as Node's Hono adapter reads it) that a URL
 * parser takes. Neither holds a backslash before its query (a URL parser would read it as `/`).
 */
function targetIsServed(target: string): boolean {
  const query = target.indexOf('?');
  const backslash = target.indexOf('\\');
  if (backslash !== -1 && (query === -1 || backslash < query)) return false;
  if (target.startsWith('/')) return true;
  return (target.startsWith('http://') || target.startsWith('https://')) && URL.canParse(target);
}

/** The path of a request target, origin-form or absolute-form, without its query. */
const pathOf = (target: string): string => target.replace(ABSOLUTE_FORM, '').split(/[?#]/, 1)[0]!;

/** The refusal of a body the route does not take, or larger than it takes: 413, the connection closed unread. */
function bodyRefusal(parts: RequestParts, rules: RequestRules): GatewayError | undefined {
  const length = parts.header('content-length');
  if (rules.takesBody(parts.method)) {
    if (length === undefined) return undefined;
    const bound = rules.boundOf(pathOf(parts.target));
    return Number(length) > bound ? tooLarge(tooLargeMessage(bound)) : undefined;
  }
  if (!declaresUnwantedBody(length, parts.header('transfer-encoding'))) return undefined;
  return tooLarge(
    `This route takes no request body; at most ${NO_BODY_MAX_BYTES} bytes are skipped, and never one with a Transfer-Encoding.`,
  );
}

const tooLarge = (detail: string) =>
  new GatewayError('payload_too_large', detail, { headers: { connection: 'close' } });

/**
 * The refusal a request earns by its parts alone, before any route reads it, or undefined. `target` is the target as
 * sent where the runtime still has it (Node); a runtime that resolved dot segments already has nothing to check there.
 */
export function requestRefusal(parts: RequestParts, rules: RequestRules): GatewayError | undefined {
  const host = parts.header('host');
  if (host === undefined && parts.httpVersion === '1.1')
    return new GatewayError('bad_request', 'An HTTP/1.1 request must have a Host header field.', {
      headers: { connection: 'close' },
    });
  if (host !== rules.lastValidHost) {
    if (!hostIsValid(host))
      return new GatewayError('bad_request', 'The Host header field is not a valid host.', {
        headers: { connection: 'close' },
      });
    rules.lastValidHost = host;
  }
  const body = bodyRefusal(parts, rules);
  if (body !== undefined) return body;
  // Two fields read as one, joined by ", ": no credential holds a comma, so which one was meant cannot be told.
  if (parts.header('authorization')?.includes(','))
    return new GatewayError('unauthorized', 'The Authorization header field must be given once.', {
      headers: { 'www-authenticate': CLIENT_CHALLENGE },
    });
  if (leavesConsole(parts.target))
    return new GatewayError('not_found', 'The console offers only its page and GET /console/v2/contacts/search.');
  if (!targetIsServed(parts.target))
    return new GatewayError('bad_request', 'The request target must be a path, or an http:// or https:// URL.');
  return undefined;
}
