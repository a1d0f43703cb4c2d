// The identity providers whose access tokens the gateway accepts (the clients file's `issuers`), and a client's
// identities at them (a client's `identities`): the schema of both, and the form the verifier holds them in.
import * as z from 'zod/mini';

/** Asymmetric JWS algorithms only (RFC 7518, RFC 8037): never `none`, never an HMAC one keyed by a public key. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
const DEFAULT_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
/** RFC 9068's claim of the client a token was issued to, then OpenID Connect's authorized party. */
const DEFAULT_CLIENT_CLAIMS = ['client_id', 'azp'];

const url = z.string().check(z.regex(/^https?:\/\/[^\s/?#]+[^\s?#]{0,2000}$/, 'must be an http(s) URL'));
const name = z.string().check(z.minLength(1), z.maxLength(256));

export const ISSUER_SCHEMA = z.strictObject({
  issuer: url,
  audience: z.union([name, z.array(name).check(z.minLength(1, 'must list at least one audience'))]),
  jwks_uri: z.optional(url),
  client_claim: z.optional(z.string().check(z.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be a claim name'))),
  algorithms: z.optional(z.array(z.enum(ALGORITHMS)).check(z.minLength(1, 'must list at least one algorithm'))),
});

export const IDENTITY_SCHEMA = z.strictObject({ issuer: url, subject: name });

/** One trusted issuer as the verifier holds it. */
export interface TrustedIssuer {
  /** Exactly as in the tokens' `iss`. */
  issuer: string;
  /** One of them must be in the token's `aud`. */
  audiences: string[];
  /** Undefined: found by discovery from the issuer. */
  jwksUri: string | undefined;
  /** The claims naming the client, the first present decides. */
  clientClaims: string[];
  algorithms: string[];
  /** The issuer's place in the clients file: its label in the metrics (a bounded set). */
  index: number;
}

export function trustedIssuerOf(i: z.infer<typeof ISSUER_SCHEMA>, index: number): TrustedIssuer {
  return {
    issuer: i.issuer,
    audiences: typeof i.audience === 'string' ? [i.audience] : i.audience,
    jwksUri: i.jwks_uri,
    clientClaims: i.client_claim === undefined ? DEFAULT_CLIENT_CLAIMS : [i.client_claim],
    algorithms: i.algorithms ?? DEFAULT_ALGORITHMS,
    index,
  };
}

/** The key an identity is looked up by. */
export const identityKey = (issuer: string, subject: string): string => `${issuer}\n${subject}`;

/**
 * The one problem of a file's issuers and identities the schema cannot say (an issuer listed twice, an identity of an
 * issuer not listed or of two clients), or undefined.
 */
export function federationProblem(
  issuers: readonly { issuer: string }[],
  clients: readonly { identities?: readonly { issuer: string; subject: string }[] | undefined }[],
): string | undefined {
  const trusted = new Set<string>();
  for (const [i, { issuer }] of issuers.entries()) {
    if (trusted.has(issuer)) return `issuers[${i}].issuer: appears twice`;
    trusted.add(issuer);
  }
  const seen = new Set<string>();
  for (const [c, client] of clients.entries())
    for (const [i, identity] of (client.identities ?? []).entries()) {
      const field = `clients[${c}].identities[${i}]`;
      if (!trusted.has(identity.issuer)) return `${field}.issuer: is not one of the issuers`;
      const key = identityKey(identity.issuer, identity.subject);
      if (seen.has(key)) return `${field}: names an identity another client has`;
      seen.add(key);
    }
  return undefined;
}
