// HTTP Basic credentials (RFC 7617) of a registered client, for PBX dialplans that cannot log in first: the
// secret is checked exactly as POST /token/login checks it (the client registry's constant-time digest compare),
// and failures count against the same failed-login throttle.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import type { ClientRegistry } from './client-registry.js';

/** One attempt's budget: the shape of the failed-login throttle of POST /token/login (src/limits/login-throttle.ts). */
export interface CredentialThrottle {
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
  /** `claimedId`: the id the credentials named, when they could be decoded. */
  | { refused: 'invalid'; claimedId?: string }
  /** `headers`: `Retry-After` and the RateLimit fields of the policy that refused. */
  | { refused: 'throttled'; retryAfterSeconds: number; headers: Record<string, string> };

export interface BasicCredentials {
  /** Checks the base64 part of `Authorization: Basic ...` for the caller at `address`. */
  verify(encoded: string, address: string | undefined): Promise<BasicVerdict>;
}

export interface BasicCredentialsOptions {
  clients: ClientRegistry;
  /** Failed attempts per client id and address; absent: not throttled. */
  throttle?: CredentialThrottle | undefined;
  clock: Clock;
  /** How long credentials found right are trusted without checking again; default 60 s. */
  rememberMs?: number;
}

const INVALID: BasicVerdict = { refused: 'invalid' };

/** `Authorization: Basic <token68>`; the one parser of the scheme's header. */
export const BASIC = /^Basic[ \t]+([A-Za-z0-9+/]+=*)[ \t]*$/i;

/** `id:secret` from the base64 of a Basic header, or undefined when it is not one. */
export function decodeBasic(encoded: string): { id: string; secret: string } | undefined {
  let text: string;
  try {
    // RFC 7617 section 2.1: UTF-8 is what clients send when asked (charset="UTF-8").
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(atob(encoded), (ch) => ch.charCodeAt(0)));
  } catch {
    return undefined;
  }
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) return undefined;
  return { id: text.slice(0, colon), secret: text.slice(colon + 1) };
}

export function createBasicCredentials(options: BasicCredentialsOptions): BasicCredentials {
  const { clients, throttle, clock } = options;
  // A dialplan sends the same header on every ring: one digest compare (and one throttle round trip) per minute,
  // not per call, keeps the store off the hit path. Only credentials found right are remembered.
  const remembered = new LRUCache<string, string>({
    max: 1000,
    ttl: options.rememberMs ?? 60_000,
    perf: { now: clock },
    ttlResolution: 0,
  });

  return {
    async verify(encoded, address) {
      const known = remembered.get(encoded);
      if (known !== undefined) return { clientId: known };
      const pair = decodeBasic(encoded);
      if (pair === undefined) return INVALID;
      const attempt = throttle === undefined ? undefined : await throttle.begin(pair.id, address);
      if (attempt !== undefined && !attempt.allowed)
        return { refused: 'throttled', retryAfterSeconds: attempt.retryAfterSeconds, headers: attempt.headers };
      if (!(await clients.authenticate(pair.id, pair.secret))) return { refused: 'invalid', claimedId: pair.id };
      await attempt?.succeeded();
      remembered.set(encoded, pair.id);
      return { clientId: pair.id };
    },
  };
}
