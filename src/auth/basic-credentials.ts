// HTTP Basic client credentials, the one reading of `Authorization: Basic` for every route (the token endpoints,
// the search, CNAM, batch): RFC 7617's base64 of UTF-8, each half form-urlencoded as RFC 6749 section 2.3.1 says,
// checked by one function that counts every failure, a malformed header included, once against the login throttle.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../base/clock.js';
import type { Logger } from '../observability/logger.js';
import type { ClientRegistry } from './client-registry.js';
import { logLoginFailed, type LoginScheme } from './login-failure.js';

/** One attempt's budget: the shape of the failed-login throttle of POST /token/login (src/limits/login-throttle.ts). */
interface CredentialThrottle {
  begin(
    clientId: string,
    address: string | undefined,
  ): Promise<{
    allowed: boolean;
    retryAfterSeconds: number;
    headers: Record<string, string>;
    succeeded(): Promise<void>;
  }>;
}

export type BasicVerdict =
  | { clientId: string }
  | { refused: 'invalid' }
  /** `headers`: `Retry-After` and the RateLimit fields of the policy that refused. */
  | { refused: 'throttled'; retryAfterSeconds: number; headers: Record<string, string> };

/** A client's id and secret as sent, or `malformed` for a Basic header that names no readable pair. */
type BasicPair = { id: string; secret: string } | 'malformed';

/** What checking a client's secret needs: the registry, the failed-login throttle and the log of failures. */
export interface CredentialServices {
  clients: ClientRegistry;
  /** Failed attempts per client id and address; absent: not throttled. */
  loginThrottle?: CredentialThrottle | undefined;
  logger: Logger;
}

const BASIC_SCHEME = /^Basic(?:[ \t]|$)/i;
/** `Basic <token68>` (RFC 7617 section 2 with RFC 9110 section 11.2); the scheme name is case-insensitive. */
const BASIC = /^Basic[ \t]+([A-Za-z0-9+/]+=*)[ \t]*$/i;

/** Whether the header names the Basic scheme at all (well-formed or not). */
export const isBasicScheme = (header: string): boolean => BASIC_SCHEME.test(header);

/**
 * One half of the pair, form-urlencoded-decoded (RFC 6749 section 2.3.1, appendix B). A half that is not valid
 * form-urlencoding (a `%` without two hex digits after it, or escapes that are not UTF-8) has no other reading
 * than as written, so it is taken raw; no encoded half can read that way, so the two forms are never confused.
 */
function formDecoded(half: string): string {
  if (!half.includes('%') && !half.includes('+')) return half;
  try {
    return decodeURIComponent(half.replaceAll('+', ' '));
  } catch {
    return half;
  }
}

/** Reads a header that names the Basic scheme: the client's id and secret, or `malformed`. */
export function readBasic(header: string): BasicPair {
  const encoded = BASIC.exec(header)?.[1];
  if (encoded === undefined) return 'malformed';
  let text: string;
  try {
    // RFC 7617 section 2.1: UTF-8 is what clients send when asked (charset="UTF-8").
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(encoded), (ch) => ch.charCodeAt(0)));
  } catch {
    return 'malformed';
  }
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return 'malformed';
  const id = formDecoded(text.slice(0, colon));
  const secret = formDecoded(text.slice(colon + 1));
  return id === '' || secret === '' ? 'malformed' : { id, secret };
}

/**
 * Checks a client's credentials for the caller at `address`: one attempt taken from the failed-login throttle before
 * the secret is compared (given back when it was right), one `login_failed` line per failure. A malformed Basic
 * header is one failed attempt of no client id, so guessing at the syntax costs what guessing secrets does.
 */
export async function checkCredentials(
  services: CredentialServices,
  pair: BasicPair,
  address: string | undefined,
  scheme: LoginScheme,
): Promise<BasicVerdict> {
  const { clients, loginThrottle, logger } = services;
  const id = pair === 'malformed' ? '' : pair.id;
  const attempt = loginThrottle === undefined ? undefined : await loginThrottle.begin(id, address);
  if (attempt !== undefined && !attempt.allowed)
    return { refused: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds, headers: attempt.headers };
  if (pair === 'malformed' || !(await clients.authenticate(pair.id, pair.secret))) {
    logLoginFailed(logger, clients.has, pair === 'malformed' ? undefined : pair.id, scheme);
    return { refused: 'invalid' };
  }
  await attempt?.succeeded();
  return { clientId: pair.id };
}

export interface BasicCredentials {
  /** Checks a header that names the Basic scheme for the caller at `address`. */
  verify(header: string, address: string | undefined): Promise<BasicVerdict>;
}

export interface BasicCredentialsOptions extends CredentialServices {
  clock: Clock;
  /** How long credentials found right are trusted without checking again; default 60 s. */
  rememberMs?: number;
}

export function createBasicCredentials(options: BasicCredentialsOptions): BasicCredentials {
  const { clients, clock } = options;
  // A dialplan sends the same header on every ring: one digest compare (and one throttle round trip) per minute,
  // not per call, keeps the store off the hit path. Only credentials found right are remembered, and only while
  // the registry still accepts them (a reload or a retired secret ends them at once).
  const remembered = new LRUCache<string, { clientId: string; generation: number }>({
    max: 1000,
    ttl: options.rememberMs ?? 60_000,
    perf: { now: clock },
    ttlResolution: 0,
  });

  return {
    async verify(header, address) {
      const known = remembered.get(header);
      if (known !== undefined && known.generation === clients.generation()) return { clientId: known.clientId };
      const generation = clients.generation();
      const verdict = await checkCredentials(options, readBasic(header), address, 'basic');
      if ('clientId' in verdict) remembered.set(header, { clientId: verdict.clientId, generation });
      return verdict;
    },
  };
}
