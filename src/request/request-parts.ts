// A request as every door hands it to runtime-neutral code (the request rules, the search), and what the gateway reads
// from its parts, the same way on every runtime and route: its request id, the number it asks for (`what`) and how
// long its caller waits (`Prefer: wait`).
import { GatewayError } from '../base/errors.js';
import type { PeerCertificate } from '../auth/certificates/peer-certificate.js';

export interface RequestParts {
  method: string;
  /** The request target as sent: origin-form (`/path?query`) or the URL the runtime built from it. */
  target: string;
  /** A header field by lower-case name as the Fetch API reads it: repeated fields joined with ", ". */
  header(name: string): string | undefined;
  /** The connection's peer address (Node: the socket; Workers: CF-Connecting-IP), before any proxy logic. */
  peerAddress(): string | undefined;
  /** The client certificate, where the runtime has one (TLS on Node, a trusted proxy's header, cf.tlsClientAuth). */
  peerCertificate?(): PeerCertificate | undefined;
  /** The HTTP version as sent (`1.1`) where the runtime shows it (Node): HTTP/1.1 requires a Host field. */
  httpVersion?: string | undefined;
  /** The request id the runtime's app already gave this request; absent, it is derived from `X-Request-Id`. */
  requestId?: string | undefined;
}

// A caller's id is kept when it is 1 to 64 characters of [A-Za-z0-9_=-]: long enough for a UUID or a trace id,
// short and plain enough to log and echo (no CR/LF, no quotes).
const GOOD_REQUEST_ID = /^[\w\-=]{1,64}$/;

/** The request id: the caller's `X-Request-Id` when well formed, else a new UUID. */
export const requestIdOf = (header: string | undefined): string =>
  header !== undefined && GOOD_REQUEST_ID.test(header) ? header : crypto.randomUUID();

// The one reader of the `what` query parameter, for every search route. It reads a
// query string as Hono's `query()` does (names and values decoded, `+` as a space, a malformed escape left as it
// is) and also counts every spelling of the name (`what`, `WHAT`, `wh%61t`, a bare `what` without `=`): more than
// one is ambiguous, because another component could read either value.

export interface WhatParam {
  /** How many names spell `what` in any case or encoding. */
  count: number;
  /** The value of the first name that decodes to exactly `what` ('' for a bare name); undefined when none does. */
  value: string | undefined;
}

/**
 * `decodeURIComponent`, leaving a malformed escape as it is instead of throwing (as Hono's `query()` reads a value):
 * each run of escapes that decodes is decoded, the rest is kept.
 */
function tryDecodeURIComponent(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
}

// An E.164 number as clients encode it (`%2B` and digits) decodes to `+` and the digits: read without the decoder.
const ENCODED_E164 = /^%2[Bb]\d+$/;

const decode = (text: string): string =>
  ENCODED_E164.test(text)
    ? `+${text.slice(3)}`
    : tryDecodeURIComponent(text.includes('+') ? text.replaceAll('+', ' ') : text);

/** Reads `query` (the part after `?`; anything from `#` on is ignored). */
export function whatParam(query: string): WhatParam {
  // The usual query, `what=<value>` alone, read without splitting (the loop below gives the same).
  if (query.startsWith('what=') && !query.includes('&') && !query.includes('#'))
    return { count: 1, value: decode(query.slice(5)) };
  const hash = query.indexOf('#');
  let count = 0;
  let value: string | undefined;
  for (const pair of (hash === -1 ? query : query.slice(0, hash)).split('&')) {
    const eq = pair.indexOf('=');
    const raw = eq === -1 ? pair : pair.slice(0, eq);
    // `what` takes four characters in any spelling; an encoded one takes more.
    if (raw.length < 4) continue;
    const name = raw.includes('%') || raw.includes('+') ? decode(raw) : raw;
    if (name.length !== 4 || name.toLowerCase() !== 'what') continue;
    count++;
    if (name === 'what' && value === undefined) value = eq === -1 ? '' : decode(pair.slice(eq + 1));
  }
  return { count, value };
}

/**
 * The single `what` parameter of a request target (origin-form or a whole URL). Any repetition is ambiguous and
 * refused, however the name is spelled: `wh%61t`, `%77hat`, `WHAT`, or a bare `what` without `=`.
 */
export function readWhat(target: string): string | undefined {
  const start = target.indexOf('?');
  if (start === -1) return undefined;
  const { count, value } = whatParam(target.slice(start + 1));
  if (count > 1) throw new GatewayError('bad_request', 'The query parameter "what" must be given once.');
  return value;
}

// `Prefer: wait=N` (RFC 7240): how long a caller is willing to wait for a lookup, and the deadline it sets.

export interface LookupDeadline {
  /** Milliseconds the caller waits for the answer before it gets a stale entry or a 504. */
  ms: number;
  /** The `Preference-Applied` value when the caller's `wait` was honoured (bounded), else undefined. */
  applied: string | undefined;
}

const WAIT_VALUE = /^\d{1,9}(?:\.\d{1,6})?$/;

/**
 * The preferences of a `Prefer` header (RFC 7240 section 2): `token [= word] *(; parameter)`, separated by commas,
 * where a word may be a quoted-string holding commas, semicolons and backslash escapes. Names are lowercased;
 * parameters are dropped (no preference here has any). An unreadable remainder ends the list.
 */
function preferences(header: string): { name: string; value: string | undefined }[] {
  const found: { name: string; value: string | undefined }[] = [];
  let i = 0;
  const skipSpace = () => {
    while (header[i] === ' ' || header[i] === '\t') i++;
  };
  const token = () => {
    const start = i;
    while (i < header.length && /[!#$%&'*+.^_`|~0-9A-Za-z-]/.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  const word = (): string | undefined => {
    if (header[i] !== '"') return token();
    let out = '';
    for (i++; i < header.length; i++) {
      const ch = header[i]!;
      if (ch === '\\') out += header[++i] ?? '';
      else if (ch === '"') {
        i++;
        return out;
      } else out += ch;
    }
    return undefined; // an unterminated quoted-string
  };
  while (i < header.length) {
    skipSpace();
    if (header[i] === ',') {
      i++;
      continue;
    }
    const name = token().toLowerCase();
    if (name === '') return found;
    skipSpace();
    let value: string | undefined;
    if (header[i] === '=') {
      i++;
      skipSpace();
      value = word();
      if (value === undefined) return found;
    }
    // Parameters: `; name [= word]`, read past (quoted values included) and dropped.
    for (skipSpace(); header[i] === ';'; skipSpace()) {
      i++;
      skipSpace();
      token();
      skipSpace();
      if (header[i] === '=') {
        i++;
        skipSpace();
        if (word() === undefined) return found;
      }
    }
    found.push({ name, value });
    skipSpace();
    if (i < header.length && header[i] !== ',') return found;
  }
  return found;
}

/**
 * The first `wait` preference's value in seconds, or undefined when there is none or it is not a
 * non-negative decimal: RFC 7240 section 2 says a preference given more than once counts only the first
 * time, and one that cannot be understood is ignored (the request is not refused).
 */
export function preferredWaitSeconds(prefer: string | undefined): number | undefined {
  if (prefer === undefined || !/wait/i.test(prefer)) return undefined;
  const wait = preferences(prefer).find((p) => p.name === 'wait');
  if (wait?.value === undefined) return undefined;
  return WAIT_VALUE.test(wait.value) ? Number(wait.value) : undefined;
}

/**
 * The caller's deadline: its `wait` bounded by `maxMs` (UPSTREAM_TIMEOUT_MS: waiting longer than the upstream
 * call may take cannot give a better answer), or `defaultMs` when it stated none.
 */
export function lookupDeadline(prefer: string | undefined, defaultMs: number, maxMs: number): LookupDeadline {
  const seconds = preferredWaitSeconds(prefer);
  if (seconds === undefined) return { ms: Math.min(defaultMs, maxMs), applied: undefined };
  const ms = Math.min(Math.round(seconds * 1000), maxMs);
  // What was applied, in seconds: the caller's value, or the bound when it asked for more.
  return { ms, applied: `wait=${ms / 1000}` };
}
