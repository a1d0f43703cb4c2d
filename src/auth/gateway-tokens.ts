// Stateless gateway tokens: HS256 JWTs with a key id, so replicas and Workers verify them without shared
// state and keys can rotate. Verified tokens are remembered until they expire, keeping crypto off the hit path.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../base/clock.js';
import { sha256Hex } from './client-registry.js';
import type { RevocationList } from './revocations.js';
import { boundThumbprint, presentsBinding, type CertificateSource } from './certificates/token-binding.js';

// The one parser of `Authorization: Bearer <token>` (RFC 6750 section 2.1: the token68 syntax), shared by the app's
// routes and Node's search door.
const BEARER = /^Bearer[ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*$/i;
const BEARER_SCHEME = /^Bearer(?:[ \t]|$)/i;

/** The token of a Bearer header, or undefined when the header is absent or not a well-formed Bearer one. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return BEARER.exec(header)?.[1];
}

/**
 * The client of a gateway token verified before and not expired, synchronously; undefined when the header needs the
 * full check. `Bearer <token>` as clients send it is looked up as it is: only verified (well-formed) tokens are known.
 */
export function knownBearerClient(
  gatewayTokens: Pick<GatewayTokens, 'peek'>,
  header: string | undefined,
  now?: number,
  certificate?: CertificateSource,
): string | undefined {
  if (header === undefined) return undefined;
  const token = header.startsWith('Bearer ') ? header.slice(7) : bearerToken(header);
  const known = token === undefined ? undefined : gatewayTokens.peek(token, now);
  // A certificate-bound token without its certificate takes the full check, which refuses it.
  return known !== undefined && presentsBinding(known.x5tS256, certificate) ? known.clientId : undefined;
}

/** Whether the header names the Bearer scheme at all (well-formed or not). */
export const isBearerScheme = (header: string): boolean => BEARER_SCHEME.test(header);

export const GATEWAY_SCOPE = 'SEARCH_contacts_watch';
const ISSUER = 'callerid-gateway';

interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

interface VerifiedToken {
  clientId: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
  /** `iat` in milliseconds since the epoch (tokens carry it to the millisecond). */
  issuedAt: number;
  /** The token's id (`jti`), which a revocation names. */
  jti: string;
  /** RFC 8705's `cnf.x5t#S256`: the certificate the token is bound to, for a token issued over mutual TLS. */
  x5tS256?: string | undefined;
}

export interface GatewayTokens {
  /** `cnf`: RFC 8705's confirmation of the certificate the token is bound to. */
  issue(clientId: string, cnf?: { 'x5t#S256': string }): Promise<IssuedToken>;
  /** The token's client, or null when it is not one of ours, is tampered with, or has expired. */
  verify(token: string): Promise<VerifiedToken | null>;
  /** A token verified before and not yet expired, synchronously; undefined when it needs verifying. */
  peek(token: string, now?: number): VerifiedToken | undefined;
  /**
   * The claims of a token of ours that has not expired, revoked or not and its client registered or not (what a
   * revocation or introspection request is about); null for anything else.
   */
  inspect(token: string): Promise<VerifiedToken | null>;
  /** Whether a verified token is still accepted: its client registered and the token not revoked. */
  accepts(token: VerifiedToken): boolean;
  /** False while the revocations have not been read from the shared store once: no token can be checked yet. */
  canCheck(): boolean;
}

/** An HS256 signing key as a JSON Web Key (RFC 7517): the secret in `k`, and the key id tokens name it by. */
interface Hs256Key extends JsonWebKey {
  kid: string;
}

type TokenClaims = Record<string, unknown>;

/**
 * HS256 JSON Web Tokens (RFC 7519). The app passes Hono's JWT helpers (`src/services/hs256-jwt.ts`): the tokens' rules are
 * here, the signing is the library's, and auth/ imports no web framework.
 */
export interface Hs256Jwt {
  sign(claims: TokenClaims, key: Hs256Key): Promise<string>;
  /** The claims of a token signed with `key` and issued by `issuer`; throws for any other. Time claims are not checked. */
  verify(token: string, key: Hs256Key, issuer: string): Promise<TokenClaims>;
  /** The key id the token's header names; throws when the token has no JWT header. */
  keyId(token: string): string | undefined;
}

export interface GatewayTokenOptions {
  jwt: Hs256Jwt;
  secret: string;
  /** Earlier signing secrets still accepted for verification during a rotation. */
  previousSecrets?: string[];
  ttlSeconds: number;
  clock: Clock;
  verifiedCacheEntries?: number;
  /**
   * Whether a client is still registered (GATEWAY_CLIENTS): a token is accepted only while it is, so removing
   * a client revokes its tokens at the next restart. A set lookup, cheap enough for the hit path.
   */
  isRegistered?: (clientId: string) => boolean;
  /** A client's own token lifetime, when it has one (the clients file); else `ttlSeconds`. */
  ttlOf?: (clientId: string) => number | undefined;
  /** The revocations every check consults (a set lookup on the hit path); absent: nothing is revoked. */
  revocations?: RevocationList;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64URL_TEXT = /^[A-Za-z0-9_-]+$/;

/**
 * The one spelling of a JWT part (RFC 7515: base64url without padding): no `=`, and the bits of the last
 * character beyond the encoded bytes are zero. Decoders ignore those bits, so without this check every
 * token would have several accepted spellings.
 */
function isCanonicalBase64url(part: string): boolean {
  if (!BASE64URL_TEXT.test(part)) return false;
  const tail = part.length % 4;
  if (tail === 0) return true;
  if (tail === 1) return false;
  const unusedBits = tail === 2 ? 0b1111 : 0b11;
  return (BASE64URL.indexOf(part[part.length - 1]!) & unusedBits) === 0;
}

function isCanonicalToken(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every(isCanonicalBase64url);
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

async function keyFor(secret: string): Promise<Hs256Key> {
  // The key id is derived from the key, so every replica configured alike agrees on it.
  const kid = (await sha256Hex(`kid:${secret}`)).slice(0, 16);
  return { kty: 'oct', k: base64url(secret), alg: 'HS256', kid };
}

export async function createGatewayTokens(options: GatewayTokenOptions): Promise<GatewayTokens> {
  const { jwt } = options;
  const signingKey = await keyFor(options.secret);
  const verifyKeys = new Map<string, Hs256Key>();
  for (const secret of [options.secret, ...(options.previousSecrets ?? [])]) {
    const key = await keyFor(secret);
    verifyKeys.set(key.kid, key);
  }
  const verified = new LRUCache<string, VerifiedToken>({ max: options.verifiedCacheEntries ?? 10_000 });
  const { clock } = options;
  const isRegistered = options.isRegistered ?? (() => true);
  const { revocations } = options;
  /** The token `peek` found last and what it verified to; expiry and registration are checked on every peek. */
  let lastPeeked: { token: string; result: VerifiedToken | undefined } = { token: '', result: undefined };

  /** Registered and not revoked: checked on every use, so no memo outlives a revocation or a removal. */
  function accepts(token: VerifiedToken): boolean {
    return isRegistered(token.clientId) && canCheck() && !(revocations?.isRevoked(token) ?? false);
  }

  function canCheck(): boolean {
    return revocations?.loaded ?? true;
  }

  async function inspect(token: string): Promise<VerifiedToken | null> {
    let result = verified.get(token);
    if (result === undefined) {
      const fresh = await verifySignature(token);
      if (!fresh) return null;
      verified.set(token, fresh);
      result = fresh;
    }
    if (result.expiresAt <= clock()) {
      verified.delete(token);
      return null;
    }
    return result;
  }

  async function verifySignature(token: string): Promise<VerifiedToken | null> {
    if (!isCanonicalToken(token)) return null;
    try {
      const kid = jwt.keyId(token);
      const key = kid === undefined ? undefined : verifyKeys.get(kid);
      if (!key) return null;
      // Time claims are checked below against the injected clock, not the library's.
      const payload = await jwt.verify(token, key, ISSUER);
      const { sub, exp, iat, jti } = payload;
      if (typeof sub !== 'string' || typeof exp !== 'number' || payload.scope !== GATEWAY_SCOPE) return null;
      if (typeof iat !== 'number' || typeof jti !== 'string' || jti === '') return null;
      const x5tS256 = boundThumbprint(payload);
      return { clientId: sub, expiresAt: exp * 1000, issuedAt: Math.round(iat * 1000), jti, x5tS256 };
    } catch {
      return null;
    }
  }

  return {
    async issue(clientId, cnf) {
      const issuedAt = clock();
      const ttlSeconds = options.ttlOf?.(clientId) ?? options.ttlSeconds;
      const accessToken = await jwt.sign(
        {
          iss: ISSUER,
          sub: clientId,
          scope: GATEWAY_SCOPE,
          // RFC 7519's NumericDate may have a fraction: to the millisecond, so a client's cut-off (tokens issued
          // before an instant) falls between two tokens issued within one second.
          iat: issuedAt / 1000,
          exp: Math.floor(issuedAt / 1000) + ttlSeconds,
          jti: crypto.randomUUID(),
          ...(cnf === undefined ? {} : { cnf }),
        },
        signingKey,
      );
      return { accessToken, expiresInSeconds: ttlSeconds };
    },

    peek(token, now = clock()) {
      // The last token peeked first: a client's connections send the same one, and comparing a new copy of it
      // costs less than hashing it for the cache (a token is about 250 characters).
      let result: VerifiedToken | undefined;
      if (token === lastPeeked.token) result = lastPeeked.result;
      else {
        result = verified.get(token);
        if (result !== undefined) lastPeeked = { token, result };
      }
      return result !== undefined && now < result.expiresAt && accepts(result) ? result : undefined;
    },

    inspect,
    accepts,
    canCheck,

    async verify(token) {
      const result = await inspect(token);
      return result !== null && accepts(result) ? result : null;
    },
  };
}
