// Access tokens of trusted identity providers (JWTs, RFC 9068 or alike) verified with `jose` against each issuer's
// JWK set, and mapped to the client whose identity names the token's client claim. A verified token is remembered
// until its `exp` so that a hit costs a map lookup; whether it is still accepted (its client registered, the token
// not revoked) is for the caller to check on every use, as for the gateway's own tokens.
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { createIssuerKeys, type IssuerKeys } from './issuer-keys.js';
import type { IdpDocumentDeps } from './idp-document-source.js';
import type { TrustedIssuer } from './trusted-issuers.js';

/** Tokens longer than this are refused before any parsing. */
export const FEDERATED_TOKEN_MAX_CHARS = 8 * 1024;
/** Skew allowed on `exp`, `nbf` and `iat`, in seconds. */
const CLOCK_SKEW_SECONDS = 60;
/** The `typ` values of an access token (RFC 9068 section 2.1, compared as RFC 7515 section 4.1.9 says), or none. */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'jwt']);
/** Header parameters that carry or point at a key of the token's own choosing: never trusted, so refused. */
const KEY_HEADERS = ['jwk', 'jku', 'x5u', 'x5c'] as const;
/** Characters of tokens remembered at most (the cache's bound; a token counts its length). */
const VERIFIED_CACHE_MAX_CHARS = 16 * 1024 * 1024;

/** What a verified token says, in the gateway tokens' terms. */
interface FederatedClaims {
  clientId: string;
  /** `exp`, ms since the epoch. */
  expiresAt: number;
  /** `iat`, ms since the epoch. */
  issuedAt: number;
  /** What a revocation names: the issuer's `jti` (digested with the issuer), or the token's digest without one. */
  jti: string;
}

/** The clients file's side: its issuers, its identities, and a number that changes when either does. */
export interface FederationDirectory {
  trustedIssuer(iss: string): TrustedIssuer | undefined;
  clientOfIdentity(issuer: string, subject: string): string | undefined;
  generation(): number;
}

export interface FederatedTokens {
  /** The claims of a trusted issuer's token that verifies, has not expired and names a client; else null. */
  inspect(token: string): Promise<FederatedClaims | null>;
  /** A token verified before and not yet expired, synchronously; undefined when it needs verifying. */
  peek(token: string, now: number): FederatedClaims | undefined;
}

export type FederatedTokenOptions = IdpDocumentDeps & {
  directory: FederationDirectory;
};

type Remembered = FederatedClaims & { generation: number };

/**
 * The first 192 bits of the text's SHA-256 in hex: a revocation's `jti` as every revocation store takes it (at most 64
 * of A-Z a-z 0-9 -), whatever the issuer's own `jti` looks like.
 */
async function digest(text: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(bytes.subarray(0, 24), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The token's issuer if its header and claims may be checked at all; undefined for any other. */
function issuerOf(token: string): string | undefined {
  if (token.length > FEDERATED_TOKEN_MAX_CHARS) return undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (KEY_HEADERS.some((name) => header[name] !== undefined)) return undefined;
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase().replace(/^application\//, '') : undefined;
    if (header.typ !== undefined && (typ === undefined || !ACCESS_TOKEN_TYPES.has(typ))) return undefined;
    const { iss } = decodeJwt(token);
    return iss;
  } catch {
    return undefined;
  }
}

function subjectOf(payload: JWTPayload, trusted: TrustedIssuer): string | undefined {
  for (const claim of trusted.clientClaims) {
    const value = payload[claim];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

export function createFederatedTokens(options: FederatedTokenOptions): FederatedTokens {
  const { directory, clock } = options;
  const keysByIssuer = new Map<string, IssuerKeys>();
  const verified = new LRUCache<string, Remembered>({
    maxSize: VERIFIED_CACHE_MAX_CHARS,
    sizeCalculation: (_claims, token) => token.length,
  });

  /** The issuer's keys, kept across reloads of the clients file while the issuer's entry stays the same. */
  function keysOf(trusted: TrustedIssuer): IssuerKeys {
    const key = JSON.stringify(trusted);
    let keys = keysByIssuer.get(key);
    if (keys === undefined) {
      keys = createIssuerKeys(trusted, options);
      keysByIssuer.set(key, keys);
    }
    return keys;
  }

  async function verify(token: string, trusted: TrustedIssuer): Promise<FederatedClaims | null> {
    const keys = keysOf(trusted);
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const key = await keys.keyFor(header);
        if (key === undefined) throw new Error('no key of the issuer verifies this token');
        return key;
      },
      {
        issuer: trusted.issuer,
        audience: trusted.audiences,
        algorithms: trusted.algorithms,
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(clock()),
        requiredClaims: ['exp', 'iat'],
      },
    );
    const { exp, iat, jti } = payload as { exp: number; iat: number; jti?: unknown };
    if (iat > clock() / 1000 + CLOCK_SKEW_SECONDS) return null;
    const subject = subjectOf(payload, trusted);
    const clientId = subject === undefined ? undefined : directory.clientOfIdentity(trusted.issuer, subject);
    if (clientId === undefined) return null;
    const id = typeof jti === 'string' && jti !== '' ? await digest(`${trusted.issuer}\n${jti}`) : await digest(token);
    return { clientId, expiresAt: exp * 1000, issuedAt: iat * 1000, jti: `idp-${id}` };
  }

  function peek(token: string, now: number): FederatedClaims | undefined {
    const found = verified.get(token);
    if (found === undefined) return undefined;
    if (now < found.expiresAt && found.generation === directory.generation()) return found;
    verified.delete(token);
    return undefined;
  }

  return {
    peek,
    async inspect(token) {
      const known = peek(token, clock());
      if (known !== undefined) return known;
      const iss = issuerOf(token);
      const trusted = iss === undefined ? undefined : directory.trustedIssuer(iss);
      if (trusted === undefined) return null;
      const generation = directory.generation();
      const claims = await verify(token, trusted).catch(() => null);
      if (claims === null || claims.expiresAt <= clock()) return null;
      verified.set(token, { ...claims, generation });
      return claims;
    },
  };
}
